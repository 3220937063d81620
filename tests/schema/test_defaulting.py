"""Defaults apply wherever the parent exists, as the API server applies them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .support import Obj, make_object, make_schema

POOL: Obj = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer", "default": 1},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
SPEC: Obj = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "default": 1},
        "paused": {"type": "boolean", "default": True},
        "mode": {"type": "string", "default": "DRA", "nullable": True},
        "strategy": {
            "type": "object",
            "default": {},
            "properties": {
                "kind": {"type": "string", "default": "Rolling"},
                "surge": {
                    "type": "object",
                    "properties": {"max": {"type": "integer", "default": 25}},
                },
            },
        },
        "template": {
            "type": "object",
            "properties": {"image": {"type": "string", "default": "busybox"}},
        },
        "pools": {"type": "array", "items": POOL},
        "byName": {"type": "object", "additionalProperties": POOL},
        "tags": {"type": "array", "items": {"type": "string", "default": "none"}},
        "note": {"type": "string"},
    },
}
SCHEMA = make_schema(SPEC)


def spec_after_default(spec: Obj) -> Obj:
    return SCHEMA.default(make_object(spec))["spec"]


CASES: list[tuple[str, Obj, Obj]] = [
    (
        "top-level and nested defaults",
        {},
        {"replicas": 1, "paused": True, "mode": "DRA", "strategy": {"kind": "Rolling"}},
    ),
    (
        "given values win, even falsy ones",
        {"replicas": 0, "paused": False, "mode": "", "strategy": {"kind": ""}},
        {"replicas": 0, "paused": False, "mode": "", "strategy": {"kind": ""}},
    ),
    (
        "a child default needs its parent",
        {"template": {}},
        {"replicas": 1, "paused": True, "mode": "DRA", "strategy": {"kind": "Rolling"},
         "template": {"image": "busybox"}},
    ),
    (
        "defaults inside a defaulted parent's existing children",
        {"strategy": {"surge": {}}},
        {"replicas": 1, "paused": True, "mode": "DRA",
         "strategy": {"kind": "Rolling", "surge": {"max": 25}}},
    ),
    (
        "list items",
        {"pools": [{"name": "a"}, {"name": "b", "count": 4}]},
        {"replicas": 1, "paused": True, "mode": "DRA", "strategy": {"kind": "Rolling"},
         "pools": [{"name": "a", "count": 1}, {"name": "b", "count": 4}]},
    ),
    (
        "additionalProperties values",
        {"byName": {"h100": {"name": "h100"}}},
        {"replicas": 1, "paused": True, "mode": "DRA", "strategy": {"kind": "Rolling"},
         "byName": {"h100": {"name": "h100", "count": 1}}},
    ),
    (
        "null without a default is dropped, null with one is defaulted",
        {"note": None, "replicas": None},
        {"replicas": 1, "paused": True, "mode": "DRA", "strategy": {"kind": "Rolling"}},
    ),
    (
        "nullable null is kept",
        {"mode": None},
        {"replicas": 1, "paused": True, "mode": None, "strategy": {"kind": "Rolling"}},
    ),
    (
        "null list item takes the items default",
        {"tags": ["a", None]},
        {"replicas": 1, "paused": True, "mode": "DRA", "strategy": {"kind": "Rolling"},
         "tags": ["a", "none"]},
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("given_spec", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_default(given_spec: Obj, expected: Obj) -> None:
    assert spec_after_default(given_spec) == expected


def test_default_leaves_the_input_alone_and_shares_nothing() -> None:
    obj = make_object({"pools": [{"name": "a"}]})
    before = copy.deepcopy(obj)
    first = SCHEMA.default(obj)
    second = SCHEMA.default(obj)
    assert obj == before
    first["spec"]["strategy"]["kind"] = "changed"
    assert second["spec"]["strategy"]["kind"] == "Rolling"


def test_admit_validates_the_defaulted_object() -> None:
    schema = make_schema(
        {"type": "object", "properties": {"size": {"type": "integer", "default": 0, "minimum": 1}}}
    )
    defaulted, errors = schema.admit(make_object({}))
    assert defaulted["spec"] == {"size": 0}
    assert [str(e) for e in errors] == [
        "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
    ]


def test_admit_drops_nulls_validate_reports_them() -> None:
    obj = make_object({"note": None})
    assert [str(e) for e in SCHEMA.validate(obj)] == [
        'spec.note: Invalid value: "null": spec.note in body must be of type string: "null"'
    ]
    assert SCHEMA.admit(obj)[1] == []


_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
_pool = st.fixed_dictionaries(
    {"name": st.text(max_size=3)},
    optional={
        "count": st.none() | st.integers(0, 9),
        "labels": st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2),
    },
)
_specs = st.fixed_dictionaries(
    {},
    optional={
        "replicas": _scalars,
        "mode": _scalars,
        "strategy": st.none()
        | st.fixed_dictionaries({}, optional={"kind": _scalars, "surge": st.just({})}),
        "pools": st.lists(_pool, max_size=3),
        "byName": st.dictionaries(st.text(max_size=2), _pool, max_size=2),
        "tags": st.lists(st.none() | st.text(max_size=2), max_size=3),
    },
)


@given(_specs)
def test_default_is_idempotent(spec: Any) -> None:
    once = SCHEMA.default(make_object(spec))
    assert SCHEMA.default(once) == once
