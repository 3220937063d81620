"""Unknown fields: pruned silently by `prune`, rejected by the strict `validate`."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from .support import Obj, errors_of, make_object, make_schema

EMBEDDED: Obj = {
    "type": "object",
    "x-kubernetes-embedded-resource": True,
    "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}},
}
SPEC: Obj = {
    "type": "object",
    "properties": {
        "known": {"type": "string"},
        "nested": {"type": "object", "properties": {"a": {"type": "integer"}}},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
        "free": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"typed": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        },
        "values": {
            "type": "object",
            "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}},
        },
        "manifest": {**EMBEDDED, "x-kubernetes-preserve-unknown-fields": True},
        "template": EMBEDDED,
    },
}
SCHEMA = make_schema(SPEC)


def test_prune_drops_unknown_fields_everywhere() -> None:
    obj = make_object(
        {
            "known": "k",
            "extra": 1,
            "nested": {"a": 1, "b": 2},
            "items": [{"name": "n", "bad": True}],
            "values": {"one": {"v": "x", "w": "y"}},
        },
        status={"phase": "Ready"},
    )
    obj["metadata"]["bogus"] = 1
    assert SCHEMA.prune(obj) == make_object(
        {"known": "k", "nested": {"a": 1}, "items": [{"name": "n"}], "values": {"one": {"v": "x"}}}
    )


def test_validate_names_every_unknown_field() -> None:
    obj = make_object(
        {"extra": 1, "nested": {"b": 2}, "items": [{"bad": True}], "values": {"one": {"w": "y"}}},
        status={},
    )
    obj["metadata"]["bogus"] = 1
    assert errors_of(SCHEMA, obj) == [
        'metadata.bogus: unknown field "metadata.bogus"',
        'spec.extra: unknown field "spec.extra"',
        'spec.items[0].bad: unknown field "spec.items[0].bad"',
        'spec.nested.b: unknown field "spec.nested.b"',
        'spec.values[one].w: unknown field "spec.values[one].w"',
        'status: unknown field "status"',
    ]


def test_preserve_unknown_fields_keeps_unknowns_but_prunes_declared_children() -> None:
    spec = {"free": {"anything": {"goes": [1, 2]}, "typed": {"n": 1, "dropped": 2}}}
    assert SCHEMA.prune(make_object(spec))["spec"] == {
        "free": {"anything": {"goes": [1, 2]}, "typed": {"n": 1}}
    }
    assert errors_of(SCHEMA, make_object(spec)) == [
        'spec.free.typed.dropped: unknown field "spec.free.typed.dropped"'
    ]


def test_preserve_unknown_fields_still_validates_declared_children() -> None:
    spec = {"free": {"typed": {"n": "one"}}}
    assert errors_of(SCHEMA, make_object(spec)) == [
        'spec.free.typed.n: Invalid value: "string": spec.free.typed.n in body must be of type '
        'integer: "string"'
    ]


def test_embedded_resource_keeps_type_meta_and_object_meta_only() -> None:
    template = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "x"}, "nonsense": 1},
        "spec": {"replicas": 2, "selector": {}},
    }
    pruned = SCHEMA.prune(make_object({"template": template}))["spec"]["template"]
    assert pruned == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "x"}},
        "spec": {"replicas": 2},
    }


def test_embedded_resource_with_preserve_unknown_keeps_its_body() -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "surprise": True},
        "data": {"k": "v"},
    }
    obj = make_object({"manifest": manifest})
    assert SCHEMA.prune(obj)["spec"]["manifest"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm"},
        "data": {"k": "v"},
    }
    assert errors_of(SCHEMA, obj) == [
        'spec.manifest.metadata.surprise: unknown field "spec.manifest.metadata.surprise"'
    ]


def test_embedded_resource_needs_api_version_and_kind() -> None:
    obj = make_object({"manifest": {"metadata": {"labels": {"bad key!": "v"}}}})
    errors = errors_of(SCHEMA, obj)
    assert "spec.manifest.apiVersion: Required value: must not be empty" in errors
    assert "spec.manifest.kind: Required value: must not be empty" in errors
    assert any(
        e.startswith('spec.manifest.metadata.labels: Invalid value: "bad key!"') for e in errors
    )


def test_embedded_resource_kind_and_api_version_syntax() -> None:
    obj = make_object({"manifest": {"apiVersion": "a/b/c", "kind": "Not_A_Kind"}})
    errors = errors_of(SCHEMA, obj)
    assert (
        'spec.manifest.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'
        in errors
    )
    assert any(
        e.startswith('spec.manifest.kind: Invalid value: "Not_A_Kind": may have mixed case')
        for e in errors
    )


_unknown = st.dictionaries(
    st.sampled_from(["u1", "u2", "known", "nested"]),
    st.integers() | st.text(max_size=2),
    max_size=4,
)


@given(_unknown, st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(), max_size=3))
def test_prune_is_idempotent_and_leaves_no_unknown_fields(
    top: dict[str, Any], nested: dict[str, Any]
) -> None:
    obj = make_object({**top, "nested": nested})
    pruned = SCHEMA.prune(obj)
    assert SCHEMA.prune(pruned) == pruned
    assert SCHEMA.unknown_fields(pruned) == []
    assert not any("unknown field" in e for e in errors_of(SCHEMA, pruned))
