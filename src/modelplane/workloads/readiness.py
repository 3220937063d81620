"""When a remote object counts as ready, and whether a replica is serving.

A workload's own controller says when it serves: Deployments and
LeaderWorkerSets publish `Available`, an LLMInferenceService publishes `Ready`.
provider-kubernetes' DeriveFromObject mirrors only a `Ready` condition, so a
CEL query over `object.status.conditions` is the one policy that checks the
right condition for every kind. The query guards with has() so a workload whose
controller has not written status yet is simply not ready.
"""

from collections.abc import Mapping, Sequence
from typing import Any, cast

from modelplane.core.pod_templates import DEPLOYMENT, LEADER_WORKER_SET, LLM_INFERENCE_SERVICE

from .model import RemoteObject

SERVING_CONDITION: dict[str, str] = {
    DEPLOYMENT: "Available",
    LEADER_WORKER_SET: "Available",
    LLM_INFERENCE_SERVICE: "Ready",
}

# Namespaces and claim templates have no runtime state: created is ready.
OBSERVED_READINESS: dict[str, Any] = {"policy": "SuccessfulCreate"}


def _condition_for(kind: str) -> str:
    try:
        return SERVING_CONDITION[kind]
    except KeyError:
        known = ", ".join(sorted(SERVING_CONDITION))
        raise ValueError(f"{kind!r} is not a workload kind ({known})") from None


def condition_query(condition: str) -> str:
    """A CEL readiness query true exactly when `condition` is True."""
    return (
        "has(object.status) && has(object.status.conditions) && "
        f"object.status.conditions.exists(c, c.type == '{condition}' && c.status == 'True')"
    )


def workload_readiness(kind: str) -> dict[str, Any]:
    """The Object `spec.readiness` block for a workload of `kind`."""
    return {"policy": "DeriveFromCelQuery", "celQuery": condition_query(_condition_for(kind))}


def workload_status(
    manifest_kind: str, observed_object: Mapping[str, Any] | None
) -> tuple[bool, str]:
    """Whether an observed remote workload serves, and a message saying why.

    `observed_object` is the workload as read back from its cluster (for a
    provider-kubernetes Object, `status.atProvider.manifest`), or None when
    it has not been observed yet.
    """
    condition = _condition_for(manifest_kind)
    if not observed_object:
        return False, f"{manifest_kind} has not been observed yet"
    name = cast(Mapping[str, Any], observed_object.get("metadata") or {}).get("name", "")
    label = f"{manifest_kind} {name}".strip()
    status = observed_object.get("status")
    conditions = (
        cast(Mapping[str, Any], status).get("conditions") if isinstance(status, Mapping) else None
    )
    for entry in cast(list[Any], conditions) if isinstance(conditions, list) else []:
        if not isinstance(entry, Mapping):
            continue
        found = cast(Mapping[str, Any], entry)
        if found.get("type") != condition:
            continue
        if found.get("status") == "True":
            return True, f"{label} is {condition}"
        detail = found.get("message") or found.get("reason") or f"status {found.get('status')}"
        return False, f"{label} is not {condition}: {detail}"
    return False, f"{label} has not reported {condition} yet"


def replica_status(
    objects: Sequence[RemoteObject], observed: Mapping[str, Mapping[str, Any] | None]
) -> tuple[bool, str]:
    """Whether every workload of a rendered replica serves.

    `observed` maps each RemoteObject key to its observed object (or None).
    A disaggregated replica serves only when decode and prefill both do.
    """
    workloads = sorted((o for o in objects if o.is_workload), key=lambda o: o.key)
    if not workloads:
        return False, "the replica renders no workload"
    results = [workload_status(o.manifest["kind"], observed.get(o.key)) for o in workloads]
    if all(ok for ok, _ in results):
        return True, "; ".join(message for _, message in results)
    return False, "; ".join(message for ok, message in results if not ok)
