"""Builders for small CRD schemas and the objects that exercise them."""

from __future__ import annotations

from typing import Any

from modelplane_cli.schema import Schema

Obj = dict[str, Any]
API_VERSION = "example.org/v1"
KIND = "Widget"


def make_schema(
    spec: Obj,
    *,
    namespaced: bool = True,
    status: Obj | None = None,
    root_rules: list[Obj] | None = None,
) -> Schema:
    """A one-version CRD schema whose `spec` is `spec`, as the API server would hold it."""
    root: Obj = {"type": "object", "properties": {"spec": spec}}
    if status is not None:
        root["properties"]["status"] = status
    if root_rules is not None:
        root["x-kubernetes-validations"] = root_rules
    return Schema(API_VERSION, KIND, namespaced, root)


def make_object(spec: Any, *, namespace: str | None = "default", **extra: Any) -> Obj:
    meta: Obj = {"name": "w"}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta, "spec": spec, **extra}


def field_schema(prop: Obj, *, required: bool = False) -> Schema:
    """A schema with one property, `spec.x`."""
    spec: Obj = {"type": "object", "properties": {"x": prop}}
    if required:
        spec["required"] = ["x"]
    return make_schema(spec)


def errors_of(schema: Schema, obj: Obj) -> list[str]:
    return [str(e) for e in schema.validate(obj)]
