"""DRA ResourceClaimTemplates: one per role, from the pool's resolved requests.

Each request is claimed per pod, and a pod is one node of a worker, so a
request's count is devices per node. Every serving pod references the template
under one pod-level claim name and its engine container claims the whole of it.
"""

from typing import Any

from modelplane.core.devices import ClaimRequest
from modelplane.core.issues import InvalidInputError
from modelplane.core.vocabulary import Reason

from .model import ClusterInput, RoleInput

# The pod-level claim name every serving pod uses for its role's template.
POD_CLAIM_NAME = "devices"

# DRA with structured parameters: beta from 1.32 (v1beta1, request fields
# inline), v1beta2 from 1.33 (fields under `exactly`), GA as v1 from 1.34.
_DRA_MIN_MINOR = 32


def claims_api_version(cluster: ClusterInput) -> str:
    minor = cluster.minor
    if minor >= 34:
        return "resource.k8s.io/v1"
    if minor == 33:
        return "resource.k8s.io/v1beta2"
    if minor == _DRA_MIN_MINOR:
        return "resource.k8s.io/v1beta1"
    raise InvalidInputError.at(
        "spec.kubernetesVersion",
        f"InferenceCluster {cluster.name} runs Kubernetes {cluster.kubernetes_version}, "
        "which has no structured DRA; "
        f"GPUs bind through DRA, which needs 1.{_DRA_MIN_MINOR} or later",
        Reason.INVALID_SPEC,
    )


def _request(request: ClaimRequest, api_version: str) -> dict[str, Any]:
    exact: dict[str, Any] = {
        "deviceClassName": request.device_class_name,
        "allocationMode": "ExactCount",
        "count": request.count,
    }
    if request.selectors:
        exact["selectors"] = [{"cel": {"expression": cel}} for cel in request.selectors]
    if api_version.endswith("/v1beta1"):
        return {"name": request.name, **exact}
    return {"name": request.name, "exactly": exact}


def claim_template(
    role: RoleInput,
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    cluster: ClusterInput,
) -> dict[str, Any]:
    """The ResourceClaimTemplate for one role; requests keep the replica's order."""
    api_version = claims_api_version(cluster)
    devices: dict[str, Any] = {
        "requests": [_request(r, api_version) for r in role.placed.device_requests],
    }
    if role.placed.constraints:
        # DRA's DeviceConstraint, the same shape in v1beta1, v1beta2 and v1.
        devices["constraints"] = [constraint.as_dict() for constraint in role.placed.constraints]
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            # Claims generated per pod carry the same identity labels, so an
            # operator can find which replica holds which devices.
            "metadata": {"labels": dict(labels)},
            "spec": {"devices": devices},
        },
    }
