"""Whatever the input, validation answers with sorted, unique field errors and never raises."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli.schema import FieldError

from .support import Obj, make_object, make_schema

ITEM: Obj = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "maxLength": 4, "pattern": "^[a-z]+$"},
        "count": {"type": "integer", "minimum": 0, "default": 1},
        "ratio": {"type": "number", "nullable": True},
    },
    "x-kubernetes-validations": [{"rule": "self.count < 5", "fieldPath": ".count"}],
}
SCHEMA = make_schema(
    {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "size": {"x-kubernetes-int-or-string": True},
            "items": {
                "type": "array",
                "maxItems": 3,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": ITEM,
            },
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "when": {"type": "string", "format": "date-time"},
        },
        "x-kubernetes-validations": [
            {"rule": "self.mode == 'a' || size(self.items) > 0", "messageExpression": "self.mode"},
            {"rule": "!has(self.size) || type(self.size) == int || self.size.endsWith('%')"},
        ],
    }
)

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(["mode", "size", "items", "labels", "free", "when", "other"])
_item = st.dictionaries(st.sampled_from(["name", "count", "ratio", "x"]), _json, max_size=4)
_spec = st.dictionaries(
    _keys, _json | st.lists(_item, max_size=4) | st.just("2026-01-01T00:00:00Z"), max_size=6
)


@settings(max_examples=150, deadline=None)
@given(_spec)
def test_validate_and_admit_never_raise(spec: dict[str, Any]) -> None:
    obj = make_object(spec)
    errors = SCHEMA.validate(obj)
    assert errors == sorted(set(errors))
    assert all(isinstance(e, FieldError) and e.message for e in errors)
    defaulted, admitted = SCHEMA.admit(obj)
    assert admitted == sorted(set(admitted))
    assert SCHEMA.default(defaulted) == defaulted
