"""OpenAPI v3 value validation, with kube-openapi's checks and wording.

A type mismatch stops validation of that value (kube-openapi would pile further,
less useful errors on it). Composite `anyOf`/`oneOf`/`allOf`/`not` failures are
reported at the node's own path; the API server attaches them to the object root.

Each schema node is compiled, the first time a value reaches it, into a closure
that holds what the node asks for (its type test, its constraints, its children's
closures), so a walk does no per-value dispatch on the schema. A node whose type
the value has exactly and that constrains nothing else returns at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modelplane_cli.schema import formats
from modelplane_cli.schema.errors import (
    FieldError,
    Kind,
    Problem,
    child,
    go_number,
    go_quote,
    internal,
    invalid,
    key,
    not_supported,
    required,
    subject,
    too_long,
    too_many,
)
from modelplane_cli.schema.listtypes import check_list
from modelplane_cli.schema.node import Node
from modelplane_cli.schema.objectmeta import check_embedded
from modelplane_cli.schema.values import (
    INT64_MAX,
    INT64_MIN,
    is_number,
    json_equal,
    json_type,
    matches_type,
)

Check = Callable[[Any, str, list[Problem]], None]
"""Append every problem with a value at a path (and below it) to a list."""

_COMPILED = "validate"


def _types(node: Node) -> str:
    if node.int_or_string:
        return "integer,string"
    return node.type


def _accepts(node: Node) -> Callable[[Any], bool] | None:
    """The node's type test (kube-openapi's), or None when any type will do.

    Each test is exact: an exact built-in type is tested first, anything else
    falls back to `matches_type`.
    """
    if node.int_or_string:
        return lambda v: isinstance(v, str) or matches_type(v, "integer")
    expected = node.type
    if not expected:
        return None
    if expected == "string":
        return lambda v: isinstance(v, str)
    if expected == "object":
        return lambda v: isinstance(v, dict)
    if expected == "array":
        return lambda v: isinstance(v, list | tuple)
    if expected == "boolean":
        return lambda v: isinstance(v, bool)
    if expected == "integer":
        return lambda v: (
            (v.__class__ is int and INT64_MIN <= v <= INT64_MAX) or matches_type(v, "integer")
        )
    return lambda v: matches_type(v, expected)


def _add(out: list[Problem], kind: Kind, path: str, message: str) -> None:
    out.append(Problem(kind, FieldError(path, message)))


def validate_value(value: Any, node: Node, path: str, out: list[Problem]) -> None:
    """Append every problem with `value` against `node` (and below) to `out`."""
    checker(node)(value, path, out)


def checker(node: Node) -> Check:
    """The node's compiled check, compiled on first use."""
    found: Check | None = node.compiled.get(_COMPILED)
    if found is None:
        found = node.compiled[_COMPILED] = _compile(node)
    return found


def _has_string_checks(node: Node) -> bool:
    return (
        node.max_length is not None
        or node.min_length is not None
        or bool(node.pattern)
        or bool(node.format)
    )


def _has_junctors(node: Node) -> bool:
    return bool(node.all_of or node.any_of or node.one_of or node.not_ is not None)


def _exact_type(node: Node) -> type | None:
    """The built-in type whose every value the node accepts with nothing to check."""
    if node.enum is not None or node.int_or_string or _has_junctors(node):
        return None
    if node.type == "string" and not _has_string_checks(node):
        return str
    if node.type == "boolean":
        return bool
    return None


def _compile(node: Node) -> Check:
    accepts = _accepts(node)
    types = _types(node)
    nullable = node.nullable
    enum = node.enum
    has_string_checks = _has_string_checks(node)
    has_number_checks = (
        node.maximum is not None or node.minimum is not None or node.multiple_of is not None
    )
    has_junctors = _has_junctors(node)
    check_object = _object_checker(node)
    check_array = _array_checker(node)

    def check(value: Any, path: str, out: list[Problem]) -> None:
        if value is None:
            # kube-openapi checks a null against the type and the enum only.
            if types and not nullable:
                detail = f'{subject(path)} must be of type {types}: "null"'
                _add(out, Kind.TYPE_INVALID, path, invalid("null", detail))
            elif enum is not None and None not in enum:
                _add(out, Kind.NOT_SUPPORTED, path, not_supported(None, enum))
            return
        if accepts is not None and not accepts(value):
            actual = json_type(value)
            detail = f"{subject(path)} must be of type {types}: {go_quote(actual)}"
            _add(out, Kind.TYPE_INVALID, path, invalid(actual, detail))
            return
        if enum is not None and not any(json_equal(value, e) for e in enum):
            _add(out, Kind.NOT_SUPPORTED, path, not_supported(value, enum))
        if isinstance(value, str):
            if has_string_checks:
                _check_string(value, node, path, out)
        elif isinstance(value, dict):
            check_object(value, path, out)
        elif isinstance(value, list):
            check_array(value, path, out)
        elif has_number_checks and is_number(value):
            _check_number(value, node, path, out)
        if has_junctors:
            _check_junctors(value, node, path, out)

    exact = _exact_type(node)
    if exact is not None:
        # The common case: a value of exactly the node's type needs no further test.
        return lambda v, p, o: None if v.__class__ is exact else check(v, p, o)
    if enum is not None or has_junctors or node.int_or_string:
        return check
    if node.type == "integer" and not has_number_checks:
        return lambda v, p, o: (
            None if v.__class__ is int and INT64_MIN <= v <= INT64_MAX else check(v, p, o)
        )
    if node.type == "object":
        return lambda v, p, o: check_object(v, p, o) if v.__class__ is dict else check(v, p, o)
    return check


def _check_string(value: str, node: Node, path: str, out: list[Problem]) -> None:
    if node.max_length is not None and len(value) > node.max_length:
        _add(out, Kind.TOO_LONG, path, too_long(node.max_length))
    if node.min_length is not None and len(value) < node.min_length:
        detail = f"{subject(path)} should be at least {node.min_length} chars long"
        _add(out, Kind.INVALID, path, invalid(value, detail))
    if node.pattern:
        regex = node.pattern_regex
        if isinstance(regex, str):
            detail = f"pattern {node.pattern!r} does not compile: {regex}"
            _add(out, Kind.INTERNAL, path, internal(detail))
        elif regex.search(value) is None:
            detail = f"{subject(path)} should match '{node.pattern}'"
            _add(out, Kind.INVALID, path, invalid(value, detail))
    if node.format and not formats.conforms(node.format, value):
        detail = f"{subject(path)} must be of type {node.format}: {go_quote(value)}"
        _add(out, Kind.TYPE_INVALID, path, invalid(value, detail))


def _is_multiple(value: int | float, factor: int | float) -> bool:
    if isinstance(value, int) and isinstance(factor, int):
        return value % factor == 0
    quotient = value / factor if factor >= 1 else (1 / factor) * value
    return float(quotient).is_integer()


def _check_number(value: int | float, node: Node, path: str, out: list[Problem]) -> None:
    top = node.maximum
    if top is not None and (value >= top if node.exclusive_maximum else value > top):
        relation = "less than" if node.exclusive_maximum else "less than or equal to"
        detail = f"{subject(path)} should be {relation} {go_number(top)}"
        _add(out, Kind.INVALID, path, invalid(value, detail))
    bottom = node.minimum
    if bottom is not None and (value <= bottom if node.exclusive_minimum else value < bottom):
        relation = "greater than" if node.exclusive_minimum else "greater than or equal to"
        detail = f"{subject(path)} should be {relation} {go_number(bottom)}"
        _add(out, Kind.INVALID, path, invalid(value, detail))
    factor = node.multiple_of
    if factor is not None and factor > 0 and not _is_multiple(value, factor):
        detail = f"{subject(path)} should be a multiple of {go_number(factor)}"
        _add(out, Kind.INVALID, path, invalid(value, detail))


def _array_checker(node: Node) -> Callable[[list[Any], str, list[Problem]], None]:
    max_items = node.max_items
    min_items = node.min_items
    unique = node.unique_items
    list_type = node.list_type
    items = node.items
    exact = None if items is None else _exact_type(items)
    check_items: Check | None = None

    def check_array(value: list[Any], path: str, out: list[Problem]) -> None:
        nonlocal check_items
        size = len(value)
        if max_items is not None and size > max_items:
            _add(out, Kind.TOO_MANY, path, too_many(size, max_items))
        if min_items is not None and size < min_items:
            detail = f"{subject(path)} should have at least {min_items} items"
            _add(out, Kind.INVALID, path, invalid(size, detail))
        if unique and any(
            json_equal(value[i], value[j]) for i in range(size) for j in range(i + 1, size)
        ):
            detail = f"{subject(path)} shouldn't contain duplicates"
            _add(out, Kind.INVALID, path, invalid("", detail))
        if list_type:
            out.extend(check_list(value, node, path))
        if items is not None:
            if check_items is None:
                check_items = checker(items)
            for i, item in enumerate(value):
                if item.__class__ is not exact:
                    check_items(item, f"{path}[{i}]", out)

    return check_array


def _object_checker(node: Node) -> Callable[[dict[str, Any], str, list[Problem]], None]:
    max_properties = node.max_properties
    min_properties = node.min_properties
    required_names = node.required
    embedded = node.embedded
    props = node.properties
    extra = node.additional
    # Each property's check by name (with the type its values need no check in), and
    # the additionalProperties check, once compiled.
    checks: dict[str, tuple[type | None, Check]] = {}
    check_extra: Check | None = None

    def check_object(value: dict[str, Any], path: str, out: list[Problem]) -> None:
        nonlocal check_extra
        if max_properties is not None or min_properties is not None:
            size = len(value)
            if max_properties is not None and size > max_properties:
                _add(out, Kind.TOO_MANY, path, too_many(size, max_properties))
            if min_properties is not None and size < min_properties:
                detail = f"{subject(path)} should have at least {min_properties} properties"
                _add(out, Kind.INVALID, path, invalid(min_properties, detail))
        for name in required_names:
            if name not in value:
                _add(out, Kind.REQUIRED, child(path, name), required())
        if embedded:
            out.extend(check_embedded(value, path))
        for name, sub in value.items():
            entry = checks.get(name)
            if entry is None:
                prop = props.get(name)
                if prop is not None:
                    entry = checks[name] = (_exact_type(prop), checker(prop))
                elif extra is not None:
                    if check_extra is None:
                        check_extra = checker(extra)
                    check_extra(sub, key(path, name), out)
                    continue
                else:
                    continue
            if sub.__class__ is not entry[0]:
                entry[1](sub, f"{path}.{name}" if path else name, out)

    return check_object


def _branch_problems(value: Any, branch: Node, path: str) -> list[Problem]:
    found: list[Problem] = []
    validate_value(value, branch, path, found)
    return found


def _check_junctors(value: Any, node: Node, path: str, out: list[Problem]) -> None:
    if not (node.all_of or node.any_of or node.one_of or node.not_ is not None):
        return
    quoted = go_quote(path)
    if node.all_of:
        results = [_branch_problems(value, b, path) for b in node.all_of]
        for found in results:
            out.extend(found)
        passed = sum(1 for found in results if not found)
        if passed != len(results):
            suffix = ". None validated" if passed == 0 else ""
            detail = f"{quoted} must validate all the schemas (allOf){suffix}"
            _add(out, Kind.INVALID, path, invalid("", detail))
    if node.any_of:
        results = [_branch_problems(value, b, path) for b in node.any_of]
        if all(results):
            detail = f"{quoted} must validate at least one schema (anyOf)"
            _add(out, Kind.INVALID, path, invalid("", detail))
            out.extend(min(results, key=len))
    if node.one_of:
        results = [_branch_problems(value, b, path) for b in node.one_of]
        passed = sum(1 for found in results if not found)
        if passed != 1:
            found_text = "Found none valid" if passed == 0 else f"Found {passed} valid alternatives"
            detail = f"{quoted} must validate one and only one schema (oneOf). {found_text}"
            _add(out, Kind.INVALID, path, invalid("", detail))
            if passed == 0:
                out.extend(min(results, key=len))
    if node.not_ is not None and not _branch_problems(value, node.not_, path):
        detail = f"{quoted} must not validate the schema (not)"
        _add(out, Kind.INVALID, path, invalid("", detail))
