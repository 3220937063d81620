"""What a team's pod template may not set: the fields and device paths the platform owns.

Modelplane pins each pod to its pool, hands it the pool's GPUs through one DRA claim
and gives it to the platform's scheduler. A template that set any of that itself would
either be overridden (losing the team's intent silently) or bypass the placement and
the accounting every other replica relies on, so it is refused, naming the field.
"""

from collections.abc import Mapping
from typing import Any, Final, cast

from modelplane.core.issues import InvalidInputError

# Pod fields Modelplane (pool pin, claims, toleration) or the scheduler
# conventions (scheduler, priority) own. Priority admission derives `priority` and
# `preemptionPolicy` from the PriorityClass the platform names, and refuses a pod
# whose values differ from the class's: a team's would stop every pod.
OWNED_POD_FIELDS: Final = (
    "nodeName",
    "nodeSelector",
    "preemptionPolicy",
    "priority",
    "priorityClassName",
    "resourceClaims",
    "schedulerName",
    "tolerations",
)
# GPUs bind through DRA claims only. The GPU resources NVIDIA's device plugin
# advertises: whole GPUs (`nvidia.com/gpu`), shared ones (`nvidia.com/gpu.shared`) and
# MIG profiles (`nvidia.com/mig-1g.10gb`); a request for any of them would take devices
# the placement counted as free for someone else. Other `nvidia.com/` resources are not
# GPUs: the Network Operator's RDMA NICs (`nvidia.com/hostdev`) are what a pool's
# `claim: Synthetic` devices are, requested by the template itself.
GPU_RESOURCES: Final = ("nvidia.com/gpu",)
GPU_RESOURCE_PREFIXES: Final = ("nvidia.com/gpu.", "nvidia.com/mig-")
# The NVIDIA container runtime exposes the GPUs this variable names (`all`, indices,
# UUIDs) to a container whatever the container claimed, unless the node's toolkit
# sets accept-nvidia-visible-devices-envvar-when-unprivileged = false (its default
# is true). Set in a template it could reach the devices DRA allocated to another
# replica on the node, so it is refused; an image's own ENV is out of Modelplane's
# sight, which is why the cluster guide asks the platform to turn that setting off.
RUNTIME_DEVICES_ENV: Final = "NVIDIA_VISIBLE_DEVICES"


def check_pod_spec(spec: Mapping[str, Any], path: str) -> None:
    """Refuse the pod fields the platform owns; `path` locates `spec`."""
    for owned in OWNED_POD_FIELDS:
        if owned in spec:
            raise InvalidInputError.at(f"{path}.{owned}", "is set by Modelplane, not the template")


def check_container(container: Mapping[str, Any], path: str) -> None:
    """Refuse a container's own route to devices; `path` locates `container`."""
    resources = as_mapping(container.get("resources") or {}, f"{path}.resources")
    if resources.get("claims"):
        raise InvalidInputError.at(
            f"{path}.resources.claims", "is set by Modelplane from deviceRequests"
        )
    for section in ("limits", "requests"):
        amounts = as_mapping(resources.get(section) or {}, f"{path}.resources.{section}")
        for resource in sorted(amounts):
            if resource in GPU_RESOURCES or resource.startswith(GPU_RESOURCE_PREFIXES):
                raise InvalidInputError.at(
                    f"{path}.resources.{section}[{resource}]",
                    "GPUs bind through the replica's DRA claim, not a device-plugin resource",
                )
    env = container.get("env")
    if not isinstance(env, list):
        return
    for i, entry in enumerate(cast(list[Any], env)):
        if isinstance(entry, Mapping) and cast(Mapping[str, Any], entry).get("name") == (
            RUNTIME_DEVICES_ENV
        ):
            raise InvalidInputError.at(
                f"{path}.env[{i}].name",
                f"{RUNTIME_DEVICES_ENV} would expose GPUs outside the replica's DRA claim; "
                "devices arrive through the claim",
            )


def as_mapping(value: object, path: str) -> Mapping[str, Any]:
    """`value` as an object, or the input error naming `path`."""
    if not isinstance(value, Mapping):
        raise InvalidInputError.at(path, "must be an object")
    return cast(Mapping[str, Any], value)
