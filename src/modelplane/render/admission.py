"""What the API server does to a composite before storing it: default, then validate.

The schema work itself lives in `modelplane.schema`; this module adapts it to the
engine (and lets tests admit everything with `NoAdmission`). Only metadata and
spec are admitted: a status travels with a document that was rendered before
(round trip) and is the engine's own to rewrite.

Composed resources that are not composites get the checks every kind gets
(metadata name, labels), since their schemas are not known here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from modelplane.core import labels as label_syntax
from modelplane.core import naming
from modelplane.render.world import Obj, View, clone, metadata
from modelplane.schema import SchemaRegistry


class Admission(Protocol):
    def admit(self, obj: View) -> tuple[Obj, list[str]]:
        """`obj` defaulted as the API server would, and its errors as "path: message"."""
        ...


class SchemaAdmission:
    """Admission by the XRDs' OpenAPI schemas and CEL rules, through `modelplane.schema`."""

    def __init__(self, registry: SchemaRegistry) -> None:
        self._registry = registry

    @classmethod
    def from_files(cls, xrd_files: Sequence[Path]) -> SchemaAdmission:
        return cls(SchemaRegistry.from_files(xrd_files))

    def admit(self, obj: View) -> tuple[Obj, list[str]]:
        schema = self._registry.get(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if schema is None:
            return clone(dict(obj)), []
        status = obj.get("status")
        body = {k: clone(v) for k, v in obj.items() if k != "status"}
        defaulted, errors = schema.admit(body)
        admitted: Obj = dict(defaulted)
        if status is not None:
            admitted["status"] = clone(status)
        return admitted, [str(e) for e in errors]


class NoAdmission:
    """Stores objects as given; for tests and for worlds without schemas."""

    def admit(self, obj: View) -> tuple[Obj, list[str]]:
        return clone(dict(obj)), []


def metadata_errors(obj: View) -> list[str]:
    """What the API server rejects in any object's metadata, whatever its kind."""
    meta = metadata(obj)
    errors: list[str] = []
    name = str(meta.get("name") or "")
    if not name:
        errors.append("metadata.name: Required value: name or generateName is required")
    elif not naming.is_dns_subdomain(name):
        errors.append(
            f"metadata.name: Invalid value: {name!r}: a lowercase RFC 1123 subdomain must consist "
            "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character"
        )
    errors.extend(_map_errors(meta.get("labels"), "metadata.labels", check_values=True))
    errors.extend(_map_errors(meta.get("annotations"), "metadata.annotations", check_values=False))
    return errors


def _map_errors(values: Any, path: str, *, check_values: bool) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, Mapping):
        return [f"{path}: Invalid value: must be a map of strings"]
    errors: list[str] = []
    for key, value in sorted(cast(Mapping[str, Any], values).items()):
        problem = label_syntax.key_error(str(key))
        if problem is not None:
            errors.append(f"{path}: Invalid value: {key!r}: {problem}")
        if not isinstance(value, str):
            errors.append(f"{path}[{key}]: Invalid value: must be a string")
        elif check_values and (problem := label_syntax.value_error(value)) is not None:
            errors.append(f"{path}[{key}]: Invalid value: {value!r}: {problem}")
    return errors
