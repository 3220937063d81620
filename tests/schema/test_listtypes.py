"""`x-kubernetes-list-type` set and map uniqueness."""

from __future__ import annotations

from typing import Any

import pytest

from .support import Obj, errors_of, field_schema, make_object

SET: Obj = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
MAP_ONE_KEY: Obj = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
    },
}
MAP_TWO_KEYS: Obj = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["port", "protocol"],
    "items": {
        "type": "object",
        "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}},
    },
}
ATOMIC: Obj = {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}}

CASES: list[tuple[str, Obj, Any, list[str]]] = [
    ("set unique", SET, ["a", "b"], []),
    ("set duplicate", SET, ["a", "b", "a"], ['spec.x[2]: Duplicate value: "a"']),
    (
        "set reports the second appearance only",
        SET,
        ["a", "a", "a"],
        ['spec.x[1]: Duplicate value: "a"'],
    ),
    (
        "set of numbers compares by value",
        {**SET, "items": {"type": "number"}},
        [1, 1.0],
        ["spec.x[1]: Duplicate value: 1"],
    ),
    ("atomic allows duplicates", ATOMIC, ["a", "a"], []),
    ("map unique", MAP_ONE_KEY, [{"name": "a"}, {"name": "b"}], []),
    (
        "map duplicate key",
        MAP_ONE_KEY,
        [{"name": "a", "size": 1}, {"name": "a", "size": 2}],
        ['spec.x[1]: Duplicate value: {"name":"a"}'],
    ),
    (
        "map items without the key collide with each other",
        MAP_ONE_KEY,
        [{"size": 1}, {"size": 2}],
        ["spec.x[1]: Duplicate value: {}"],
    ),
    (
        "map with two keys",
        MAP_TWO_KEYS,
        [
            {"port": 80, "protocol": "TCP"},
            {"port": 80, "protocol": "UDP"},
            {"port": 80, "protocol": "TCP"},
        ],
        ['spec.x[2]: Duplicate value: {"port":80,"protocol":"TCP"}'],
    ),
]


@pytest.mark.parametrize(
    ("prop", "value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_list_type(prop: Obj, value: Any, expected: list[str]) -> None:
    assert errors_of(field_schema(prop), make_object({"x": value})) == expected


def test_nested_list_maps_are_checked() -> None:
    outer = {"type": "array", "items": {"type": "object", "properties": {"inner": MAP_ONE_KEY}}}
    value = [{"inner": [{"name": "a"}]}, {"inner": [{"name": "b"}, {"name": "b"}]}]
    assert errors_of(field_schema(outer), make_object({"x": value})) == [
        'spec.x[1].inner[1]: Duplicate value: {"name":"b"}'
    ]
