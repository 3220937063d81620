"""Whether a built-in object passes its kubernetes-validate schema, compiled to closures.

The `jsonschema` library interprets a schema on every call: each keyword of each
node is looked up, dispatched and turned into an error generator, which made
validating a Deployment cost milliseconds. Almost every object a render checks is
valid, and for a valid object the only answer needed is "no errors". So each
kind's schema is compiled once into plain closures that answer exactly that
question; only an object they find invalid goes through `jsonschema`, whose
errors (and so every message) are unchanged.

The compiled check must agree with `jsonschema` exactly on validity. It covers
only the keywords kubernetes-validate's strict schemas use, with `jsonschema`'s
own semantics (Draft 2020-12, the format checker `builtin` configures); a schema
using anything else is not compiled (`UnsupportedSchemaError`), and its kind is always
validated by `jsonschema`. `tests/schema/test_builtin_verdict.py` holds the two to
the same verdicts on generated objects.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

from modelplane.cel.quantity import Quantity, QuantityError

Check = Callable[[Any], bool]

# Keywords that only annotate: jsonschema ignores them when validating.
_ANNOTATIONS = frozenset({"description", "$schema", "$id", "$defs"})
_DEFINITIONS_REF = "/api/_definitions.json#/$defs/"
_LOCAL_REF = "#/$defs/"


class UnsupportedSchemaError(Exception):
    """The schema uses a keyword or reference this compiler does not implement."""


def _is_integer(value: Any) -> bool:
    # From Draft 4 on, a float with no fractional part is an integer too (1.0).
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Number)


# jsonschema's Draft 2020-12 type checker, type by type.
_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "number": _is_number,
    "null": lambda v: v is None,
}
# The types one isinstance decides (a bool is not an integer, so those are apart).
_CLASSES: dict[str, type] = {"string": str, "object": dict, "array": list, "boolean": bool}


def quantity_format(value: object) -> bool:
    """The Quantity format, the one check of it (here and in `builtin`'s jsonschema
    FormatChecker): a string must be what `resource.ParseQuantity` parses
    (QuantityError saying why not); anything else is the schema's type to judge."""
    if isinstance(value, str):
        Quantity.parse(value)
    return True


def _quantity(value: Any) -> bool:
    try:
        return quantity_format(value)
    except QuantityError:
        return False


class Compiler:
    """Compiles schemas that refer into one version's shared definitions.

    `quantity_format` is the format name `builtin` gives the Quantity definition;
    every other format is not checked, as `builtin`'s format checker knows no other.
    """

    def __init__(self, definitions: Mapping[str, Any], quantity_format: str) -> None:
        self._definitions = definitions
        self._quantity_format = quantity_format
        self._refs: dict[str, Check] = {}

    def compile_root(self, schema: Mapping[str, Any]) -> Check:
        """A kind's schema file; UnsupportedSchemaError when it cannot be compiled exactly.

        A failed compilation forgets every definition it compiled: some may refer to
        the one that failed, whose entry never got its check.
        """
        before = dict(self._refs)
        try:
            return self._compile(schema, in_definitions=False)
        except UnsupportedSchemaError:
            self._refs = before
            raise

    def _ref(self, name: str) -> Check:
        found = self._refs.get(name)
        if found is not None:
            return found
        target = self._definitions.get(name)
        if not isinstance(target, Mapping):
            raise UnsupportedSchemaError(f"unresolvable reference {name!r}")
        # Definitions can refer to themselves (directly or not): until it is compiled,
        # a definition's entry is a trampoline to the cell its check will be put in.
        cell: list[Check] = []
        self._refs[name] = lambda v: cell[0](v)  # noqa: PLW0108 (cell is empty yet)
        compiled = self._compile(target, in_definitions=True)  # pyright: ignore[reportUnknownArgumentType]
        cell.append(compiled)
        self._refs[name] = compiled
        return compiled

    def _compile(self, schema: Any, in_definitions: bool) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        if not isinstance(schema, Mapping):
            raise UnsupportedSchemaError(f"schema of type {type(schema).__name__}")
        node: Mapping[str, Any] = schema  # pyright: ignore[reportUnknownVariableType]
        checks: list[Check] = []
        object_check = False
        for keyword, value in node.items():
            if keyword in _ANNOTATIONS or keyword.startswith("x-kubernetes-"):
                continue
            if keyword == "type":
                checks.insert(0, self._type(value))
            elif keyword == "enum":
                checks.append(self._enum(value))
            elif keyword == "format":
                if value == self._quantity_format:
                    checks.append(_quantity)
            elif keyword == "$ref":
                checks.append(self._reference(value, in_definitions))
            elif keyword == "items":
                checks.append(self._items(self._compile(value, in_definitions)))
            elif keyword == "oneOf":
                checks.append(self._one_of(value, in_definitions))
            elif keyword in ("properties", "additionalProperties", "required"):
                object_check = True
            else:
                raise UnsupportedSchemaError(f"keyword {keyword!r}")
        if object_check:
            checks.append(self._object(node, in_definitions))
        if not checks:
            return lambda v: True
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks
            return lambda v: first(v) and second(v)
        every = tuple(checks)
        return lambda v: all(c(v) for c in every)

    def _reference(self, ref: Any, in_definitions: bool) -> Check:
        if isinstance(ref, str) and ref.startswith(_DEFINITIONS_REF):
            name = ref[len(_DEFINITIONS_REF) :]
        elif isinstance(ref, str) and in_definitions and ref.startswith(_LOCAL_REF):
            name = ref[len(_LOCAL_REF) :]
        else:
            raise UnsupportedSchemaError(f"reference {ref!r}")
        if "/" in name or "~" in name or "%" in name:
            raise UnsupportedSchemaError(f"reference {ref!r}")
        return self._ref(name)

    def _type(self, value: Any) -> Check:
        names: Any = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or any(n not in _TYPES for n in names):
            raise UnsupportedSchemaError(f"type {value!r}")
        if all(n in _CLASSES or n == "null" for n in names):
            # One isinstance for the common case, as fast as the check can be.
            classes = tuple(_CLASSES[n] for n in names if n != "null")
            if "null" in names:
                return lambda v: v is None or isinstance(v, classes)
            return lambda v: isinstance(v, classes)
        every = tuple(_TYPES[n] for n in names)
        return lambda v: any(c(v) for c in every)

    def _enum(self, value: Any) -> Check:
        # jsonschema compares a string member with `==`, so a non-string never
        # equals one; members of other types would need its bool-aware equality.
        if not isinstance(value, list) or not all(isinstance(m, str) for m in value):  # pyright: ignore[reportUnknownVariableType]
            raise UnsupportedSchemaError("enum with members that are not strings")
        members = frozenset(value)  # pyright: ignore[reportUnknownArgumentType]
        return lambda v: isinstance(v, str) and v in members

    def _items(self, item: Check) -> Check:
        def check(v: Any) -> bool:
            if not isinstance(v, list):
                return True
            return all(item(element) for element in v)  # pyright: ignore[reportUnknownVariableType]

        return check

    def _one_of(self, value: Any, in_definitions: bool) -> Check:
        if not isinstance(value, list) or not value:
            raise UnsupportedSchemaError("oneOf")
        options = tuple(self._compile(s, in_definitions) for s in value)  # pyright: ignore[reportUnknownVariableType]
        return lambda v: sum(1 for o in options if o(v)) == 1

    def _object(self, node: Mapping[str, Any], in_definitions: bool) -> Check:
        raw_properties = node.get("properties", {})
        if not isinstance(raw_properties, Mapping):
            raise UnsupportedSchemaError("properties")
        properties: dict[str, Check] = {
            str(k): self._compile(s, in_definitions)
            for k, s in raw_properties.items()  # pyright: ignore[reportUnknownVariableType]
        }
        additional = node.get("additionalProperties", True)
        closed = additional is False
        extra: Check | None = None
        if isinstance(additional, dict):
            extra = self._compile(additional, in_definitions)
        elif additional is not True and additional is not False:
            raise UnsupportedSchemaError("additionalProperties")
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):  # pyright: ignore[reportUnknownVariableType]
            raise UnsupportedSchemaError("required")
        needed = tuple(required)  # pyright: ignore[reportUnknownArgumentType]

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for key, field in v.items():  # pyright: ignore[reportUnknownVariableType]
                known = properties.get(key)  # pyright: ignore[reportUnknownArgumentType]
                if known is not None:
                    if not known(field):
                        return False
                elif closed or (extra is not None and not extra(field)):
                    return False
            return all(name in v for name in needed)

        return check
