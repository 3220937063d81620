"""CEL types for the static checker, and overload resolution over them.

celpy has no type checker. This is the small part of cel-go's checker that a
DRA selector needs: concrete types for literals, the `device` variable and
library results, `dyn` for attribute values and anything the checker cannot
know, and overload resolution that rejects a call only when no declared overload
can accept the argument types. `dyn` is assignable both ways, as in cel-go, so
the checker never rejects what Kubernetes would accept on account of dyn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class CelType:
    """A CEL type; names starting with "_" are type parameters of overloads."""

    name: str
    params: tuple[CelType, ...] = ()
    # The element type of an empty literal, which cel-go leaves as a free type
    # variable: it joins any type in a literal. It behaves as dyn everywhere else.
    free: bool = False

    def __str__(self) -> str:
        if self.params:
            return f"{self.name}({', '.join(str(p) for p in self.params)})"
        return self.name

    @property
    def is_param(self) -> bool:
        return self.name.startswith("_")


DYN: Final = CelType("dyn")
FREE: Final = CelType("dyn", free=True)
# google.protobuf.Any: what DRA attribute values are before list-typed attributes
# (KEP-5491). The checker treats it as dyn, except that it is no comprehension range.
ANY: Final = CelType("any")
BOOL: Final = CelType("bool")
INT: Final = CelType("int")
UINT: Final = CelType("uint")
DOUBLE: Final = CelType("double")
STRING: Final = CelType("string")
BYTES: Final = CelType("bytes")
NULL: Final = CelType("null_type")
QUANTITY: Final = CelType("kubernetes.Quantity")
SEMVER: Final = CelType("kubernetes.Semver")
TIMESTAMP: Final = CelType("google.protobuf.Timestamp")
DURATION: Final = CelType("google.protobuf.Duration")
DEVICE: Final = CelType("kubernetes.DRADevice")
A: Final = CelType("_A")
B: Final = CelType("_B")


def list_of(elem: CelType) -> CelType:
    return CelType("list", (elem,))


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType("map", (key, value))


def type_of(value: CelType) -> CelType:
    return CelType("type", (value,))


LIST_DYN: Final = list_of(DYN)
MAP_DYN: Final = map_of(DYN, DYN)
NUMERIC: Final = (INT, UINT, DOUBLE)


def device_fields(attribute: CelType) -> dict[str, CelType]:
    """The fields of `device`, with attribute values of the given type (dyn or any)."""
    return {
        "driver": STRING,
        "attributes": map_of(STRING, map_of(STRING, attribute)),
        "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
        "allowMultipleAllocations": BOOL,
    }


DEVICE_FIELDS: Final = device_fields(DYN)


def is_dyn(t: CelType) -> bool:
    return t.name in ("dyn", "any")


def unify_literal(left: CelType, right: CelType, dyn_is_unknown: bool = False) -> CelType | None:
    """Two element types of one list or map literal, or None when Kubernetes refuses them.

    Kubernetes checks literals with cel-go's homogeneous-aggregate validator: every
    element must have an equivalent type, so `[1, dyn(2)]` is an error although the
    checker alone would accept it. Only the free element type of an empty literal
    (`[[], [1]]`) takes the other side's type, as cel-go's type inference does.
    With `dyn_is_unknown`, dyn stands for a type the checker does not know (a CRD
    rule's `self`, typed by a schema upstream) and joins any type too.
    """
    if left.free or (dyn_is_unknown and left.name == "dyn"):
        return right
    if right.free or (dyn_is_unknown and right.name == "dyn"):
        return left
    if left.name != right.name or len(left.params) != len(right.params):
        return None
    params: list[CelType] = []
    for a, b in zip(left.params, right.params, strict=True):
        joined = unify_literal(a, b, dyn_is_unknown)
        if joined is None:
            return None
        params.append(joined)
    return CelType(left.name, tuple(params))


def _assign(param: CelType, arg: CelType, bindings: dict[str, CelType]) -> bool:
    if param.is_param:
        bound = bindings.get(param.name)
        if bound is None:
            bindings[param.name] = arg
            return True
        if is_dyn(bound):
            return True
        if is_dyn(arg):
            return True
        if _assign(bound, arg, {}):
            return True
        if _assign(arg, bound, {}):
            bindings[param.name] = arg
            return True
        return False
    if is_dyn(param) or is_dyn(arg):
        return True
    if param.name == "type" and arg.name == "type":
        # cel-go checks type values as `type` whatever they denote: type(1) == type(1u).
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(_assign(p, a, bindings) for p, a in zip(param.params, arg.params, strict=True))


def substitute(t: CelType, bindings: dict[str, CelType]) -> CelType:
    if t.is_param:
        return bindings.get(t.name, DYN)
    if not t.params:
        return t
    return CelType(t.name, tuple(substitute(p, bindings) for p in t.params))


def assignable(target: CelType, value: CelType) -> bool:
    return _assign(target, value, {})


def join(left: CelType, right: CelType) -> CelType | None:
    """The type of a value that is either left or right, or None when they conflict."""
    if is_dyn(left) or is_dyn(right):
        return DYN
    if left == right:
        return left
    if assignable(left, right):
        return left if _has_dyn(left) else right
    if assignable(right, left):
        return right
    return None


def _has_dyn(t: CelType) -> bool:
    return is_dyn(t) or any(_has_dyn(p) for p in t.params)


Impl = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Overload:
    """One static signature of a function. Member overloads list the receiver first."""

    params: tuple[CelType, ...]
    result: CelType
    member: bool = False


@dataclass(frozen=True, slots=True)
class Function:
    """A declared function: static signatures for the checker, one runtime implementation.

    The implementation dispatches on the runtime types of its arguments, which is
    what cel-go does for arguments typed dyn; the checker has already rejected
    calls that no signature accepts.
    """

    name: str
    overloads: tuple[Overload, ...]
    impl: Impl
    # For the rare function whose result depends on static types (the zero of an
    # empty list's sum): builds the implementation from the argument types.
    specialize: Callable[[Sequence[CelType]], Impl] | None = None

    def implementation(self, args: Sequence[CelType]) -> Impl:
        return self.impl if self.specialize is None else self.specialize(args)


def overloads(*signatures: tuple[tuple[CelType, ...], CelType]) -> tuple[Overload, ...]:
    return tuple(Overload(params, result) for params, result in signatures)


def members(*signatures: tuple[tuple[CelType, ...], CelType]) -> tuple[Overload, ...]:
    return tuple(Overload(params, result, member=True) for params, result in signatures)


@dataclass(frozen=True, slots=True)
class Resolution:
    candidates: tuple[Overload, ...]
    result: CelType


def describe_call(name: str, member: bool, args: Sequence[CelType]) -> str:
    if member:
        receiver, rest = args[0], args[1:]
        return f"'{name}' applied to '{receiver}.({', '.join(str(a) for a in rest)})'"
    return f"'{name}' applied to '({', '.join(str(a) for a in args)})'"


def resolve(function: Function, member: bool, args: Sequence[CelType]) -> Resolution | None:
    """Overloads that accept the static argument types, and the joined result type."""
    candidates: list[Overload] = []
    results: list[CelType] = []
    for overload in function.overloads:
        if overload.member != member or len(overload.params) != len(args):
            continue
        bindings: dict[str, CelType] = {}
        if all(_assign(p, a, bindings) for p, a in zip(overload.params, args, strict=True)):
            candidates.append(overload)
            results.append(substitute(overload.result, bindings))
    if not candidates:
        return None
    result = results[0] if all(r == results[0] for r in results) else DYN
    return Resolution(tuple(candidates), result)
