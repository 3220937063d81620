"""The CRD schema Crossplane derives from a CompositeResourceDefinition version.

An XRD's `openAPIV3Schema` describes only the author's part. Crossplane (v2.3,
crossplane-runtime v2.3.0 pkg/xcrd) starts from a fixed base, copies a few things from the author's
`spec` and `status`, and then adds its own machinery, winning any name clash:

- root: `required: [spec]`; the author's root rules are kept; `metadata` keeps only
  a `name` limit of at most 63 characters (the name becomes a label value).
- spec: the author's properties, `required`, rules, `oneOf` and
  preserve-unknown-fields; then `spec.crossplane.{compositionRef,
  compositionSelector, compositionRevisionRef, compositionRevisionSelector,
  compositionUpdatePolicy, resourceRefs}` for Namespaced and Cluster scopes, or
  those plus `claimRef` and `writeConnectionSecretToRef` directly under `spec`
  for LegacyCluster (v1) XRDs.
- status: the author's properties, `required`, rules and `oneOf`; then
  `conditions` (a list-map keyed by `type`), and for LegacyCluster only
  `connectionDetails` and `claimConditionTypes` (Namespaced and Cluster XRs have no
  connection details, so nothing under `status.crossplane`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.core.labels import LABEL_VALUE_MAX
from modelplane_cli.schema.values import copy_json

NAMESPACED = "Namespaced"
CLUSTER = "Cluster"
LEGACY_CLUSTER = "LegacyCluster"
# The composite name becomes the crossplane.io/composite label value.
_MAX_NAME = LABEL_VALUE_MAX

_STRING: dict[str, Any] = {"type": "string"}
_MATCH_LABELS: dict[str, Any] = {
    "type": "object",
    "required": ["matchLabels"],
    "properties": {
        "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
_NAME_REF: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": _STRING},
}
_DATE_TIME: dict[str, Any] = {"type": "string", "format": "date-time"}


def _resource_refs(with_namespace: bool) -> dict[str, Any]:
    props = {"apiVersion": _STRING, "kind": _STRING, "name": _STRING}
    if with_namespace:
        props["namespace"] = _STRING
    return {
        "type": "array",
        "x-kubernetes-list-type": "atomic",
        "items": {"type": "object", "required": ["apiVersion", "kind"], "properties": props},
    }


def _update_policy(default: str | None) -> dict[str, Any]:
    policy: dict[str, Any] = {"type": "string", "enum": ["Automatic", "Manual"]}
    if default:
        policy["default"] = default
    return policy


def spec_props(scope: str, update_policy: str | None) -> dict[str, Any]:
    """What Crossplane adds under an XR's `spec` (CompositeResourceSpecProps)."""
    props: dict[str, Any] = {
        "compositionRef": _NAME_REF,
        "compositionSelector": _MATCH_LABELS,
        "compositionRevisionRef": _NAME_REF,
        "compositionRevisionSelector": _MATCH_LABELS,
        "compositionUpdatePolicy": _update_policy(update_policy),
        "resourceRefs": _resource_refs(with_namespace=scope != NAMESPACED),
    }
    if scope == LEGACY_CLUSTER:
        props["claimRef"] = {
            "type": "object",
            "required": ["apiVersion", "kind", "namespace", "name"],
            "properties": dict.fromkeys(("apiVersion", "kind", "namespace", "name"), _STRING),
        }
        props["writeConnectionSecretToRef"] = {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"name": _STRING, "namespace": _STRING},
        }
        return props
    return {"crossplane": {"type": "object", "properties": props}}


def claim_spec_props(delete_policy: str | None) -> dict[str, Any]:
    """What Crossplane adds under a claim's `spec` (CompositeResourceClaimSpecProps)."""
    delete: dict[str, Any] = {"type": "string", "enum": ["Background", "Foreground"]}
    if delete_policy:
        delete["default"] = delete_policy
    return {
        "compositionRef": _NAME_REF,
        "compositionSelector": _MATCH_LABELS,
        "compositionRevisionRef": _NAME_REF,
        "compositionRevisionSelector": _MATCH_LABELS,
        "compositionUpdatePolicy": _update_policy(None),
        "compositeDeletePolicy": delete,
        "resourceRef": {
            "type": "object",
            "required": ["apiVersion", "kind", "name"],
            "properties": {"apiVersion": _STRING, "kind": _STRING, "name": _STRING},
        },
        "writeConnectionSecretToRef": _NAME_REF,
    }


def status_props(scope: str) -> dict[str, Any]:
    """What Crossplane adds under `status` (CompositeResourceStatusProps)."""
    condition = {
        "type": "object",
        "required": ["lastTransitionTime", "reason", "status", "type"],
        "properties": {
            "lastTransitionTime": _DATE_TIME,
            "message": _STRING,
            "reason": _STRING,
            "status": _STRING,
            "type": _STRING,
            "observedGeneration": {"type": "integer", "format": "int64"},
        },
    }
    connection = {"type": "object", "properties": {"lastPublishedTime": _DATE_TIME}}
    props: dict[str, Any] = {
        "conditions": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
            "items": condition,
        },
    }
    if scope == LEGACY_CLUSTER:
        props["connectionDetails"] = connection
        props["claimConditionTypes"] = {
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": _STRING,
        }
    return props


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _copy_part(user: Mapping[str, Any], keep_preserve: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "object", "properties": {}}
    for field in ("required", "x-kubernetes-validations", "oneOf"):
        if field in user:
            part[field] = copy_json(user[field])
    if keep_preserve and "x-kubernetes-preserve-unknown-fields" in user:
        part["x-kubernetes-preserve-unknown-fields"] = user["x-kubernetes-preserve-unknown-fields"]
    part["properties"].update(copy_json(dict(_mapping(user.get("properties")))))
    return part


def derive(
    user_schema: Mapping[str, Any],
    extra_spec: Mapping[str, Any],
    extra_status: Mapping[str, Any],
) -> dict[str, Any]:
    """The derived CRD version schema for one XRD version (genCrdVersion)."""
    user_props = _mapping(user_schema.get("properties"))
    name_max = _MAX_NAME
    user_meta = _mapping(_mapping(user_props.get("metadata")).get("properties"))
    declared = _mapping(user_meta.get("name")).get("maxLength")
    if isinstance(declared, int) and not isinstance(declared, bool) and declared < name_max:
        name_max = declared
    spec = _copy_part(_mapping(user_props.get("spec")), keep_preserve=True)
    spec["properties"].update(copy_json(dict(extra_spec)))
    status = _copy_part(_mapping(user_props.get("status")), keep_preserve=False)
    status["properties"].update(copy_json(dict(extra_status)))
    root: dict[str, Any] = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": name_max}},
            },
            "spec": spec,
            "status": status,
        },
    }
    if "x-kubernetes-validations" in user_schema:
        root["x-kubernetes-validations"] = copy_json(user_schema["x-kubernetes-validations"])
    return root
