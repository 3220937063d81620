"""Each OpenAPI keyword accepts and rejects values as kube-openapi does, with its wording."""

from __future__ import annotations

from typing import Any

import pytest

from .support import Obj, errors_of, field_schema, make_object

STRING: Obj = {"type": "string"}
OBJ_AB: Obj = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}


def _type(expected: str, actual: str, path: str = "spec.x") -> str:
    return (
        f'{path}: Invalid value: "{actual}": {path} in body must be of type {expected}: "{actual}"'
    )


CASES: list[tuple[str, Obj, Any, list[str]]] = [
    # type
    ("string ok", STRING, "a", []),
    ("string given int", STRING, 5, [_type("string", "integer")]),
    ("integer ok", {"type": "integer"}, 3, []),
    ("integral float is an integer", {"type": "integer"}, 3.0, []),
    ("fraction is not an integer", {"type": "integer"}, 3.5, [_type("integer", "number")]),
    ("bool is not an integer", {"type": "integer"}, True, [_type("integer", "boolean")]),
    ("beyond int64 is a number", {"type": "integer"}, 2**64, [_type("integer", "number")]),
    ("number takes ints", {"type": "number"}, 1, []),
    ("number takes floats", {"type": "number"}, 1.5, []),
    ("number given string", {"type": "number"}, "1", [_type("number", "string")]),
    ("boolean ok", {"type": "boolean"}, False, []),
    ("boolean given string", {"type": "boolean"}, "true", [_type("boolean", "string")]),
    ("object given array", {"type": "object"}, [], [_type("object", "array")]),
    ("array given object", {"type": "array", "items": STRING}, {}, [_type("array", "object")]),
    ("null is not a string", STRING, None, [_type("string", "null")]),
    ("nullable takes null", {"type": "string", "nullable": True}, None, []),
    # enum
    ("enum ok", {"type": "string", "enum": ["DRA", "Synthetic"]}, "DRA", []),
    (
        "enum rejects",
        {"type": "string", "enum": ["DRA", "Synthetic"]},
        "Foo",
        ['spec.x: UnsupportedValueError value: "Foo": supported values: "DRA", "Synthetic"'],
    ),
    (
        "integer enum",
        {"type": "integer", "enum": [1, 2]},
        3,
        ['spec.x: UnsupportedValueError value: 3: supported values: "1", "2"'],
    ),
    ("integer enum matches float", {"type": "integer", "enum": [1, 2]}, 2.0, []),
    (
        "a nullable enum still checks null",
        {"type": "string", "nullable": True, "enum": ["a"]},
        None,
        ['spec.x: UnsupportedValueError value: null: supported values: "a"'],
    ),
    (
        "null in a nullable enum",
        {"type": "string", "nullable": True, "enum": ["a", None]},
        None,
        [],
    ),
    # strings
    (
        "pattern rejects",
        {"type": "string", "pattern": "^[a-z]+$"},
        "ABC",
        ["spec.x: Invalid value: \"ABC\": spec.x in body should match '^[a-z]+$'"],
    ),
    ("pattern is a search", {"type": "string", "pattern": "b"}, "abc", []),
    (
        "pattern classes are ASCII",
        {"type": "string", "pattern": "^\\d$"},
        "\u0663",
        ["spec.x: Invalid value: \"\u0663\": spec.x in body should match '^\\d$'"],
    ),
    (
        "maxLength counts characters",
        {"type": "string", "maxLength": 3},
        "h\u00e9ll",
        ["spec.x: Too long: may not be more than 3 bytes"],
    ),
    ("maxLength is not bytes", {"type": "string", "maxLength": 2}, "h\u00e9", []),
    (
        "maxLength one",
        {"type": "string", "maxLength": 1},
        "ab",
        ["spec.x: Too long: may not be more than 1 byte"],
    ),
    (
        "minLength",
        {"type": "string", "minLength": 2},
        "a",
        ['spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long'],
    ),
    # numbers
    (
        "maximum",
        {"type": "integer", "maximum": 10},
        11,
        ["spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10"],
    ),
    ("maximum inclusive", {"type": "integer", "maximum": 10}, 10, []),
    (
        "exclusiveMaximum",
        {"type": "integer", "maximum": 10, "exclusiveMaximum": True},
        10,
        ["spec.x: Invalid value: 10: spec.x in body should be less than 10"],
    ),
    (
        "minimum",
        {"type": "integer", "minimum": 1},
        0,
        ["spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"],
    ),
    (
        "exclusiveMinimum",
        {"type": "number", "minimum": 1.5, "exclusiveMinimum": True},
        1.5,
        ["spec.x: Invalid value: 1.5: spec.x in body should be greater than 1.5"],
    ),
    (
        "multipleOf",
        {"type": "integer", "multipleOf": 2},
        3,
        ["spec.x: Invalid value: 3: spec.x in body should be a multiple of 2"],
    ),
    ("multipleOf fraction", {"type": "number", "multipleOf": 0.5}, 1.5, []),
    # arrays
    (
        "maxItems",
        {"type": "array", "maxItems": 2, "items": STRING},
        ["a", "b", "c"],
        ["spec.x: Too many: 3: must have at most 2 items"],
    ),
    (
        "minItems",
        {"type": "array", "minItems": 1, "items": STRING},
        [],
        ["spec.x: Invalid value: 0: spec.x in body should have at least 1 items"],
    ),
    (
        "uniqueItems",
        {"type": "array", "uniqueItems": True, "items": STRING},
        ["a", "a"],
        ['spec.x: Invalid value: "": spec.x in body shouldn\'t contain duplicates'],
    ),
    (
        "items paths carry the index",
        {
            "type": "array",
            "items": {"type": "object", "required": ["name"], "properties": {"name": STRING}},
        },
        [{"name": "a"}, {}],
        ["spec.x[1].name: Required value"],
    ),
    # objects
    (
        "maxProperties",
        {"type": "object", "maxProperties": 1, "additionalProperties": STRING},
        {"a": "1", "b": "2"},
        ["spec.x: Too many: 2: must have at most 1 item"],
    ),
    (
        "minProperties",
        {"type": "object", "minProperties": 2, "additionalProperties": STRING},
        {"a": "1"},
        ["spec.x: Invalid value: 2: spec.x in body should have at least 2 properties"],
    ),
    (
        "required",
        {"type": "object", "required": ["a"], "properties": {"a": STRING}},
        {},
        ["spec.x.a: Required value"],
    ),
    (
        "additionalProperties values use key paths",
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"arch": "x86"},
        [_type("integer", "string", "spec.x[arch]")],
    ),
    # junctors
    (
        "allOf",
        {"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^a"}]},
        "b",
        [
            'spec.x: Invalid value: "": "spec.x" must validate all the schemas (allOf). '
            "None validated",
            'spec.x: Invalid value: "b": spec.x in body should be at least 2 chars long',
            "spec.x: Invalid value: \"b\": spec.x in body should match '^a'",
        ],
    ),
    (
        "anyOf",
        {**OBJ_AB, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {},
        [
            'spec.x: Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
            "spec.x.a: Required value",
        ],
    ),
    (
        "anyOf satisfied",
        {**OBJ_AB, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"b": 1},
        [],
    ),
    (
        "oneOf",
        {**OBJ_AB, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"a": 1, "b": 2},
        [
            'spec.x: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). '
            "Found 2 valid alternatives",
        ],
    ),
    (
        "not",
        {**OBJ_AB, "not": {"required": ["a"]}},
        {"a": 1},
        ['spec.x: Invalid value: "": "spec.x" must not validate the schema (not)'],
    ),
    # int-or-string
    ("int-or-string int", {"x-kubernetes-int-or-string": True}, 5, []),
    ("int-or-string string", {"x-kubernetes-int-or-string": True}, "5%", []),
    (
        "int-or-string fraction",
        {"x-kubernetes-int-or-string": True},
        1.5,
        [_type("integer,string", "number")],
    ),
    # formats
    ("date-time ok", {"type": "string", "format": "date-time"}, "2024-01-01T00:00:00Z", []),
    (
        "date-time rejects",
        {"type": "string", "format": "date-time"},
        "yesterday",
        [
            'spec.x: Invalid value: "yesterday": spec.x in body must be of type date-time: '
            '"yesterday"'
        ],
    ),
    ("int32 is not range-checked", {"type": "integer", "format": "int32"}, 2**40, []),
    ("unknown formats are not checked", {"type": "string", "format": "my-thing"}, "?", []),
    # preserve-unknown-fields without a type takes anything
    ("untyped preserve", {"x-kubernetes-preserve-unknown-fields": True}, [1, {"a": None}], []),
]


@pytest.mark.parametrize(
    ("prop", "value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_keyword(prop: Obj, value: Any, expected: list[str]) -> None:
    assert sorted(errors_of(field_schema(prop), make_object({"x": value}))) == sorted(expected)


def test_type_error_stops_checks_below_it() -> None:
    prop = {"type": "object", "required": ["a"], "properties": {"a": STRING}}
    assert errors_of(field_schema(prop), make_object({"x": "flat"})) == [_type("object", "string")]


def test_missing_spec_property_is_reported_with_its_path() -> None:
    schema = field_schema(STRING, required=True)
    assert errors_of(schema, make_object({})) == ["spec.x: Required value"]


def test_root_requirements() -> None:
    schema = field_schema(STRING)
    obj = make_object({"x": "a"})
    obj["kind"] = "Gadget"
    del obj["apiVersion"]
    assert errors_of(schema, obj) == [
        "apiVersion: Required value",
        'kind: Invalid value: "Gadget": must be "Widget"',
    ]


def test_validation_is_deterministic() -> None:
    prop = {"type": "object", "additionalProperties": {"type": "integer", "maximum": 1}}
    value = dict.fromkeys("zyxwvu", 5)
    first = errors_of(field_schema(prop), make_object({"x": value}))
    reordered = dict(reversed(list(value.items())))
    assert errors_of(field_schema(prop), make_object({"x": reordered})) == first
    assert len(first) == 6
    errors = field_schema(prop).validate(make_object({"x": value}))
    assert errors == sorted(errors)
