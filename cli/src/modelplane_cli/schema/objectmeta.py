"""ObjectMeta: its structural schema and the API server's create-time checks.

The API server never validates `metadata` against a CRD's schema alone: it decodes
it into ObjectMeta (so only ObjectMeta's fields survive) and runs
`ValidateObjectMetaAccessor`. A CRD may only add constraints on `name` and
`generateName`, which `merged_meta_schema` folds in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from modelplane.core import labels
from modelplane.core.naming import DNS_LABEL_MAX, DNS_SUBDOMAIN_MAX
from modelplane_cli.schema.errors import (
    FieldError,
    Kind,
    Problem,
    child,
    forbidden,
    invalid,
    required,
    too_long,
)

_STRING = {"type": "string", "nullable": True}
_INT = {"type": "integer", "format": "int64", "nullable": True}
_STRING_MAP = {"type": "object", "nullable": True, "additionalProperties": {"type": "string"}}

# Every ObjectMeta field is nullable: a JSON null decodes into a Go zero value.
OBJECT_META_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "name": _STRING,
        "generateName": _STRING,
        "namespace": _STRING,
        "selfLink": _STRING,
        "uid": _STRING,
        "resourceVersion": _STRING,
        "generation": _INT,
        "creationTimestamp": {"type": "string", "format": "date-time", "nullable": True},
        "deletionTimestamp": {"type": "string", "format": "date-time", "nullable": True},
        "deletionGracePeriodSeconds": _INT,
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "finalizers": {
            "type": "array",
            "nullable": True,
            "x-kubernetes-list-type": "set",
            "items": {"type": "string"},
        },
        "ownerReferences": {
            "type": "array",
            "nullable": True,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["uid"],
            "items": {
                "type": "object",
                "required": ["apiVersion", "kind", "name", "uid"],
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "name": {"type": "string"},
                    "uid": {"type": "string"},
                    "controller": {"type": "boolean", "nullable": True},
                    "blockOwnerDeletion": {"type": "boolean", "nullable": True},
                },
            },
        },
        "managedFields": {
            "type": "array",
            "nullable": True,
            "items": {
                "type": "object",
                "properties": {
                    "manager": _STRING,
                    "operation": _STRING,
                    "apiVersion": _STRING,
                    "time": {"type": "string", "format": "date-time", "nullable": True},
                    "fieldsType": _STRING,
                    "fieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "subresource": _STRING,
                },
            },
        },
    },
}

_OVERRIDABLE = ("name", "generateName")


def merged_meta_schema(declared: Any) -> Mapping[str, Any]:
    """ObjectMeta's schema with a CRD's own `name`/`generateName` constraints added."""
    if not isinstance(declared, Mapping):
        return OBJECT_META_SCHEMA
    declared_props = declared.get("properties")
    if not isinstance(declared_props, Mapping):
        return OBJECT_META_SCHEMA
    props = dict(OBJECT_META_SCHEMA["properties"])
    for name in _OVERRIDABLE:
        extra = declared_props.get(name)
        if isinstance(extra, Mapping):
            props[name] = {**_STRING, **extra}
    return {**OBJECT_META_SCHEMA, "properties": props}


# Name syntax (k8s.io/apimachinery/pkg/util/validation) ------------------------------------

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def dns1123_label_errors(value: str) -> list[str]:
    out: list[str] = []
    if len(value) > DNS_LABEL_MAX:
        out.append(f"must be no more than {DNS_LABEL_MAX} characters")
    if not _DNS1123_LABEL.match(value):
        out.append(_LABEL_MSG)
    return out


def dns1123_subdomain_errors(value: str) -> list[str]:
    out: list[str] = []
    if len(value) > DNS_SUBDOMAIN_MAX:
        out.append(f"must be no more than {DNS_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        out.append(_SUBDOMAIN_MSG)
    return out


def dns1035_label_errors(value: str) -> list[str]:
    out: list[str] = []
    if len(value) > DNS_LABEL_MAX:
        out.append(f"must be no more than {DNS_LABEL_MAX} characters")
    if not _DNS1035_LABEL.match(value):
        out.append(_DNS1035_MSG)
    return out


# Checks ---------------------------------------------------------------------------------


def _problem(kind: Kind, path: str, message: str) -> Problem:
    return Problem(kind, FieldError(path, message))


def _string(meta: Mapping[str, Any], name: str) -> str:
    value = meta.get(name)
    return value if isinstance(value, str) else ""


def check_labels_and_annotations(meta: Mapping[str, Any], path: str) -> list[Problem]:
    """Label and annotation syntax, for a resource root or an embedded resource."""
    out: list[Problem] = []
    label_path = child(path, "labels")
    label_map = meta.get("labels")
    if isinstance(label_map, Mapping):
        for k in sorted(label_map):
            v = label_map[k]
            if (reason := labels.key_error(k)) is not None:
                out.append(_problem(Kind.INVALID, label_path, invalid(k, reason)))
            if isinstance(v, str) and (reason := labels.value_error(v)) is not None:
                out.append(_problem(Kind.INVALID, label_path, invalid(v, reason)))
    notes_path = child(path, "annotations")
    notes = meta.get("annotations")
    if isinstance(notes, Mapping):
        total = 0
        for k in sorted(notes):
            v = notes[k]
            if (reason := labels.key_error(k.lower())) is not None:
                out.append(_problem(Kind.INVALID, notes_path, invalid(k, reason)))
            total += len(k.encode()) + (len(v.encode()) if isinstance(v, str) else 0)
        if total > labels.ANNOTATIONS_TOTAL_MAX:
            limit = labels.ANNOTATIONS_TOTAL_MAX
            out.append(_problem(Kind.TOO_LONG, notes_path, too_long(limit)))
    finalizers = meta.get("finalizers")
    if isinstance(finalizers, list):
        for i, name in enumerate(finalizers):
            if isinstance(name, str) and (reason := labels.key_error(name)) is not None:
                out.append(_problem(Kind.INVALID, f"{path}.finalizers[{i}]", invalid(name, reason)))
    return out


_NAME_REQUIRED = "name or generateName is required"


def check_root_meta(meta: Any, namespaced: bool) -> list[Problem]:
    """`ValidateObjectMetaAccessor` for a create of a custom resource."""
    path = "metadata"
    if not isinstance(meta, Mapping):
        return [_problem(Kind.REQUIRED, child(path, "name"), required(_NAME_REQUIRED))]
    out: list[Problem] = []
    name = _string(meta, "name")
    generate = _string(meta, "generateName")
    if generate:
        # A generated name is the prefix plus random characters, so a trailing '-' is fine.
        prefix = generate[:-1] if generate.endswith("-") and len(generate) > 1 else generate
        out.extend(
            _problem(Kind.INVALID, child(path, "generateName"), invalid(generate, msg))
            for msg in dns1123_subdomain_errors(prefix)
        )
    if not name and not generate:
        out.append(_problem(Kind.REQUIRED, child(path, "name"), required(_NAME_REQUIRED)))
    elif name:
        out.extend(
            _problem(Kind.INVALID, child(path, "name"), invalid(name, msg))
            for msg in dns1123_subdomain_errors(name)
        )
    namespace = _string(meta, "namespace")
    ns_path = child(path, "namespace")
    if namespaced:
        if not namespace:
            out.append(_problem(Kind.REQUIRED, ns_path, required()))
        else:
            out.extend(
                _problem(Kind.INVALID, ns_path, invalid(namespace, msg))
                for msg in dns1123_label_errors(namespace)
            )
    elif namespace:
        out.append(_problem(Kind.FORBIDDEN, ns_path, forbidden("not allowed on this type")))
    out.extend(check_labels_and_annotations(meta, path))
    return out


def check_embedded(obj: Mapping[str, Any], path: str) -> list[Problem]:
    """What the API server requires of an `x-kubernetes-embedded-resource` object."""
    out = [
        _problem(Kind.REQUIRED, child(path, field), required("must not be empty"))
        for field in ("apiVersion", "kind")
        if field not in obj
    ]
    api_version = obj.get("apiVersion")
    if "apiVersion" in obj:
        field_path = child(path, "apiVersion")
        if not isinstance(api_version, str):
            out.append(_problem(Kind.INVALID, field_path, invalid(api_version, "must be a string")))
        elif not api_version:
            out.append(_problem(Kind.INVALID, field_path, invalid("", "must not be empty")))
        elif api_version.count("/") > 1:
            msg = f"unexpected GroupVersion string: {api_version}"
            out.append(_problem(Kind.INVALID, field_path, invalid(api_version, msg)))
    kind = obj.get("kind")
    if "kind" in obj:
        field_path = child(path, "kind")
        if not isinstance(kind, str):
            out.append(_problem(Kind.INVALID, field_path, invalid(kind, "must be a string")))
        elif not kind:
            out.append(_problem(Kind.INVALID, field_path, invalid("", "must not be empty")))
        elif errs := dns1035_label_errors(kind.lower()):
            msg = "may have mixed case, but should otherwise match: " + ",".join(errs)
            out.append(_problem(Kind.INVALID, field_path, invalid(kind, msg)))
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        out.extend(check_labels_and_annotations(meta, child(path, "metadata")))
    return out
