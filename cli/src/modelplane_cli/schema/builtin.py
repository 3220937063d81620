"""Built-in Kubernetes kinds, validated against kubernetes-validate's strict schemas.

kubernetes-validate ships JSON Schemas generated from each Kubernetes release's
OpenAPI document; its `-strict` variants reject unknown fields, like the API
server's strict field validation. Its own `validate` stops at the first error and
compares versions as strings, so this module reads the same schema files, reports
every error, and resolves versions numerically. Only its schema files are read.
An object is first put to the kind's compiled validity check (`builtin_verdict`);
jsonschema walks it for its errors only when that check fails it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from modelplane.cel.quantity import QuantityError
from modelplane_cli.schema.builtin_verdict import (
    Check,
    Compiler,
    UnsupportedSchemaError,
    quantity_format,
)
from modelplane_cli.schema.errors import (
    FieldError,
    child,
    go_quote,
    index,
    invalid,
    not_supported,
    required,
    subject,
    unknown_field,
)
from modelplane_cli.schema.semantics import builtin_problems
from modelplane_cli.schema.values import json_type

_SCHEMA_ROOT = "kubernetes-json-schema"
_VERSION_DIR = re.compile(r"^v(\d+)\.(\d+)\.\d+-local-strict$")
_SCALARS = (str, int, float, bool)
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
QUANTITY_FORMAT = "quantity"
# What the API server's decoder answers for a quantity ParseQuantity refuses.
QUANTITY_SYNTAX = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


@cache
def _schema_dir() -> Path:
    # Found without importing the package: its __init__ imports jsonschema, which
    # a render whose built-in objects are all valid never needs.
    spec = find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise LookupError("kubernetes-validate is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / _SCHEMA_ROOT


@cache
def _versions() -> dict[tuple[int, int], str]:
    found: dict[tuple[int, int], str] = {}
    for entry in _schema_dir().iterdir():
        m = _VERSION_DIR.match(entry.name)
        if m:
            found[(int(m[1]), int(m[2]))] = entry.name
    return found


def builtin_versions() -> list[str]:
    """The Kubernetes minor versions kubernetes-validate has strict schemas for."""
    return [f"{major}.{minor}" for major, minor in sorted(_versions())]


def _resolve(kubernetes_version: str) -> tuple[str, str]:
    """The newest shipped minor not newer than the one asked for, and its directory."""
    m = re.match(r"^v?(\d+)\.(\d+)", kubernetes_version)
    if m is None:
        raise ValueError(f"not a Kubernetes version: {kubernetes_version!r}")
    wanted = (int(m[1]), int(m[2]))
    shipped = _versions()
    if wanted > max(shipped):
        raise ValueError(f"kubernetes-validate has no schemas for Kubernetes {kubernetes_version}")
    candidates = [v for v in shipped if v <= wanted]
    if not candidates:
        raise ValueError(f"kubernetes-validate has no schemas for Kubernetes {kubernetes_version}")
    best = max(candidates)
    return f"{best[0]}.{best[1]}", shipped[best]


def _schema_file(api_version: str, kind: str) -> str:
    # kubernetes-validate names files <kind>-<group prefix>-<version>.json: apps/v1 -> apps-v1.
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


def _read(directory: str, filename: str) -> Any:
    entry = _schema_dir().joinpath(directory).joinpath(filename)
    if not entry.is_file():
        return None
    return json.loads(entry.read_text(encoding="utf-8"))


@cache
def _definitions_contents(directory: str) -> Any:
    """The shared definitions every kind's schema refers to, read once per version.

    Quantity is declared as any string or number; the API server's decoder accepts
    only what `resource.ParseQuantity` parses, so it gets a format that says so.
    """
    contents = _read(directory, "_definitions.json")
    quantity = contents.get("$defs", {}).get(_QUANTITY)
    if isinstance(quantity, dict):
        quantity["format"] = QUANTITY_FORMAT
    return contents


@cache
def _definitions(directory: str) -> Any:
    """The shared definitions as a `referencing` registry, for jsonschema."""
    from referencing import Registry, Resource

    registry: Any = Resource.from_contents(_definitions_contents(directory)) @ Registry()
    return registry


@cache
def _compiler(directory: str) -> Compiler:
    """One compiler per version, so each definition is compiled once for every kind."""
    return Compiler(_definitions_contents(directory).get("$defs", {}), QUANTITY_FORMAT)


@cache
def _verdict(directory: str, filename: str) -> Check | None:
    """The kind's compiled validity check; None when its schema cannot be compiled
    (then every object of the kind goes through jsonschema)."""
    schema = _read(directory, filename)
    if schema is None:
        return None
    try:
        return _compiler(directory).compile_root(schema)
    except UnsupportedSchemaError:
        return None


@cache
def _format_checker() -> Any:
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    checker.checks(QUANTITY_FORMAT, raises=QuantityError)(quantity_format)
    return checker


@cache
def _validator(directory: str, filename: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Resource

    schema = _read(directory, filename)
    if schema is None:
        return None
    registry = Resource.from_contents(schema) @ _definitions(directory)
    return Draft202012Validator(schema, registry=registry, format_checker=_format_checker())


def validate_builtin(obj: dict[str, Any], kubernetes_version: str = "1.34") -> list[FieldError]:
    """Strictly validate a built-in object (Deployment, Namespace, ResourceClaimTemplate...).

    Raises LookupError when kubernetes-validate has no schema for the object's
    apiVersion and kind in that Kubernetes version, and ValueError for a version
    it does not ship.
    """
    version, directory = _resolve(kubernetes_version)
    identity = _identity_errors(obj)
    if identity:
        return identity
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    filename = _schema_file(api_version, kind)
    errors: set[FieldError] = set()
    verdict = _verdict(directory, filename)
    # The compiled check agrees with jsonschema on validity (`builtin_verdict`):
    # an object it passes has no schema errors, and only one it fails is walked
    # again by jsonschema, for the errors and their messages.
    if verdict is None or not verdict(obj):
        validator = _validator(directory, filename)
        if validator is None:
            raise LookupError(f"no schema for {api_version} {kind} in Kubernetes {version}")
        for error in validator.iter_errors(obj):
            errors.update(_convert(error))
    errors.update(builtin_problems(obj))
    return sorted(errors)


def _identity_errors(obj: dict[str, Any]) -> list[FieldError]:
    """Why apiVersion or kind cannot name a schema: absent, empty or not a string."""
    errors: list[FieldError] = []
    for field in ("apiVersion", "kind"):
        value = obj.get(field)
        if value is None or value == "":
            errors.append(FieldError(field, required()))
        elif not isinstance(value, str):
            actual = json_type(value)
            detail = f"{subject(field)} must be of type string: {go_quote(actual)}"
            errors.append(FieldError(field, invalid(actual, detail)))
    return errors


def _path(parts: Iterable[Any]) -> str:
    path = ""
    for part in parts:
        path = index(path, part) if isinstance(part, int) else child(path, str(part))
    return path


def _type_names(expected: Any) -> str:
    names = [expected] if isinstance(expected, str) else list(expected)
    return ",".join(n for n in names if n != "null")


def _convert(error: Any) -> list[FieldError]:
    path = _path(error.absolute_path)
    instance = error.instance
    keyword = error.validator
    if keyword == "additionalProperties" and isinstance(instance, dict):
        declared = error.schema.get("properties", {})
        extra = sorted(k for k in instance if k not in declared)
        return [FieldError(child(path, k), unknown_field(child(path, k))) for k in extra]
    if keyword == "required" and isinstance(instance, dict):
        missing = [k for k in error.validator_value if k not in instance]
        return [FieldError(child(path, k), required()) for k in missing]
    if keyword == "type":
        actual = json_type(instance)
        detail = f"{subject(path)} must be of type {_type_names(error.validator_value)}: "
        return [FieldError(path, invalid(actual, detail + go_quote(actual)))]
    if keyword == "enum":
        allowed = [v for v in error.validator_value if v is not None]
        return [FieldError(path, not_supported(instance, allowed))]
    if keyword == "format" and error.validator_value == QUANTITY_FORMAT:
        return [FieldError(path, str(error.cause or QUANTITY_SYNTAX))]
    if keyword in ("oneOf", "anyOf"):
        if instance is None:
            return []
        types = [s.get("type") for s in error.validator_value if isinstance(s, dict)]
        if types and all(t is not None for t in types):
            actual = json_type(instance)
            names = ",".join(_type_names(t) for t in types)
            detail = f"{subject(path)} must be of type {names}: {go_quote(actual)}"
            return [FieldError(path, invalid(actual, detail))]
    bad = instance if isinstance(instance, _SCALARS) else ""
    return [FieldError(path, invalid(bad, error.message))]
