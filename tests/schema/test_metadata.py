"""ObjectMeta checks of a create: name, namespace, labels and annotations."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.schema import Schema

from .support import API_VERSION, KIND, Obj, errors_of, make_schema

SPEC: Obj = {"type": "object", "properties": {"x": {"type": "string"}}}
NAMESPACED = make_schema(SPEC)
CLUSTER = make_schema(SPEC, namespaced=False)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def with_meta(meta: Any) -> Obj:
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta, "spec": {}}


CASES: list[tuple[str, Schema, Any, list[str]]] = [
    ("valid namespaced", NAMESPACED, {"name": "w", "namespace": "team-a"}, []),
    ("valid cluster", CLUSTER, {"name": "w"}, []),
    (
        "name required",
        NAMESPACED,
        {"namespace": "team-a"},
        ["metadata.name: Required value: name or generateName is required"],
    ),
    ("generateName instead of name", NAMESPACED, {"generateName": "w-", "namespace": "n"}, []),
    (
        "name syntax",
        NAMESPACED,
        {"name": "Bad_Name", "namespace": "n"},
        [f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}'],
    ),
    ("namespace required", NAMESPACED, {"name": "w"}, ["metadata.namespace: Required value"]),
    (
        "namespace forbidden on a cluster-scoped kind",
        CLUSTER,
        {"name": "w", "namespace": "n"},
        ["metadata.namespace: Forbidden: not allowed on this type"],
    ),
    (
        "label key syntax",
        CLUSTER,
        {"name": "w", "labels": {"-bad": "v"}},
        [
            "metadata.labels: Invalid value: \"-bad\": name '-bad' must be 1 to 63 alphanumerics, "
            "'-', '_' or '.', starting and ending with an alphanumeric"
        ],
    ),
    (
        "label value syntax",
        CLUSTER,
        {"name": "w", "labels": {"ok": "bad value"}},
        [
            "metadata.labels: Invalid value: \"bad value\": must be alphanumerics, '-', '_' or "
            "'.', starting and ending with an alphanumeric"
        ],
    ),
    (
        "label value type",
        CLUSTER,
        {"name": "w", "labels": {"n": 1}},
        [
            'metadata.labels[n]: Invalid value: "integer": metadata.labels[n] in body must be of '
            'type string: "integer"'
        ],
    ),
    ("prefixed annotation", CLUSTER, {"name": "w", "annotations": {"example.com/a": "x y z"}}, []),
    ("nulls decode to zero values", CLUSTER, {"name": "w", "creationTimestamp": None}, []),
]


@pytest.mark.parametrize(
    ("schema", "meta", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_metadata(schema: Schema, meta: Any, expected: list[str]) -> None:
    assert errors_of(schema, with_meta(meta)) == expected


def test_annotations_total_size() -> None:
    meta = {"name": "w", "annotations": {"a": "x" * (256 * 1024)}}
    assert errors_of(CLUSTER, with_meta(meta)) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_schema_name_constraints_apply_to_metadata() -> None:
    root = {
        "type": "object",
        "properties": {
            "metadata": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 5}},
            },
            "spec": SPEC,
        },
    }
    schema = Schema(API_VERSION, KIND, False, root)
    assert errors_of(schema, with_meta({"name": "toolong"})) == [
        "metadata.name: Too long: may not be more than 5 bytes"
    ]


def test_missing_metadata() -> None:
    obj = with_meta({})
    del obj["metadata"]
    assert errors_of(CLUSTER, obj) == [
        "metadata.name: Required value: name or generateName is required"
    ]
