"""OpenAPI v3 value validation, with kube-openapi's checks and wording.

A type mismatch stops validation of that value (kube-openapi would pile further,
less useful errors on it). Composite `anyOf`/`oneOf`/`allOf`/`not` failures are
reported at the node's own path; the API server attaches them to the object root.
"""

from __future__ import annotations

from typing import Any

from modelplane_cli.schema import formats
from modelplane_cli.schema.errors import (
    FieldError,
    Kind,
    Problem,
    child,
    go_number,
    go_quote,
    index,
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
from modelplane_cli.schema.values import is_number, json_equal, json_type, matches_type


def _types(node: Node) -> str:
    if node.int_or_string:
        return "integer,string"
    return node.type


def _type_ok(value: Any, node: Node) -> bool:
    if node.int_or_string:
        return matches_type(value, "integer") or isinstance(value, str)
    return not node.type or matches_type(value, node.type)


def _add(out: list[Problem], kind: Kind, path: str, message: str) -> None:
    out.append(Problem(kind, FieldError(path, message)))


def validate_value(value: Any, node: Node, path: str, out: list[Problem]) -> None:
    """Append every problem with `value` against `node` (and below) to `out`."""
    types = _types(node)
    if value is None:
        # kube-openapi checks a null against the type and the enum only.
        if types and not node.nullable:
            detail = f'{subject(path)} must be of type {types}: "null"'
            _add(out, Kind.TYPE_INVALID, path, invalid("null", detail))
        elif node.enum is not None and None not in node.enum:
            _add(out, Kind.NOT_SUPPORTED, path, not_supported(None, node.enum))
        return
    if not _type_ok(value, node):
        actual = json_type(value)
        detail = f"{subject(path)} must be of type {types}: {go_quote(actual)}"
        _add(out, Kind.TYPE_INVALID, path, invalid(actual, detail))
        return
    if node.enum is not None and not any(json_equal(value, e) for e in node.enum):
        _add(out, Kind.NOT_SUPPORTED, path, not_supported(value, node.enum))
    if isinstance(value, str):
        _check_string(value, node, path, out)
    elif is_number(value):
        _check_number(value, node, path, out)
    elif isinstance(value, list):
        _check_array(value, node, path, out)
    elif isinstance(value, dict):
        _check_object(value, node, path, out)
    _check_junctors(value, node, path, out)


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


def _check_array(value: list[Any], node: Node, path: str, out: list[Problem]) -> None:
    size = len(value)
    if node.max_items is not None and size > node.max_items:
        _add(out, Kind.TOO_MANY, path, too_many(size, node.max_items))
    if node.min_items is not None and size < node.min_items:
        detail = f"{subject(path)} should have at least {node.min_items} items"
        _add(out, Kind.INVALID, path, invalid(size, detail))
    if node.unique_items and any(
        json_equal(value[i], value[j]) for i in range(size) for j in range(i + 1, size)
    ):
        _add(out, Kind.INVALID, path, invalid("", f"{subject(path)} shouldn't contain duplicates"))
    out.extend(check_list(value, node, path))
    items = node.items
    if items is not None:
        for i, item in enumerate(value):
            validate_value(item, items, index(path, i), out)


def _check_object(value: dict[str, Any], node: Node, path: str, out: list[Problem]) -> None:
    size = len(value)
    if node.max_properties is not None and size > node.max_properties:
        _add(out, Kind.TOO_MANY, path, too_many(size, node.max_properties))
    if node.min_properties is not None and size < node.min_properties:
        detail = f"{subject(path)} should have at least {node.min_properties} properties"
        _add(out, Kind.INVALID, path, invalid(node.min_properties, detail))
    for name in node.required:
        if name not in value:
            _add(out, Kind.REQUIRED, child(path, name), required())
    if node.embedded:
        out.extend(check_embedded(value, path))
    props = node.properties
    extra = node.additional
    for name, sub in value.items():
        prop = props.get(name)
        if prop is not None:
            validate_value(sub, prop, child(path, name), out)
        elif extra is not None:
            validate_value(sub, extra, key(path, name), out)


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
