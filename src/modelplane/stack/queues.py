"""Quota and usage of an in-cluster queue, as its scheduler reports them.

An Observe-only Object reports the queue object it reads under
`status.atProvider.manifest`. GPUs are counted over every resource whose name
contains `gpu` (`gpu`, `nvidia.com/gpu`, a DRA device-class mapping such as
`gpu.nvidia.com`), the heuristic KAI itself applies to DRA claims:

- KAI `Queue`: quota `spec.resources.gpu.quota` (-1 or absent: unlimited); used
  `status.allocatedNonPreemptible` (non-preemptible work, the only kind quota
  limits), else `status.allocated`;
- Kueue `ClusterQueue`: quota the `nominalQuota` of every flavor's GPU
  resources; used the `total` of `status.flavorsReservation` (quota reserved by
  admitted and admitting workloads). A `LocalQueue` has no quota of its own:
  `cluster_queue` names the ClusterQueue it draws from;
- Volcano `Queue`: quota `spec.capability` (a hard cap), else `spec.deserved`;
  used `status.allocated`.

A queue that states neither quota nor usage says nothing: None.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final, cast

KAI: Final = "KAI"
KUEUE: Final = "Kueue"
VOLCANO: Final = "Volcano"
PROVIDER_OF_GROUP: Final = {
    "scheduling.run.ai": KAI,
    "kueue.x-k8s.io": KUEUE,
    "scheduling.volcano.sh": VOLCANO,
}
_SUFFIXES: Final = {"k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


@dataclass(frozen=True)
class QueueQuota:
    """GPUs a queue may hold (`quota`, None when unlimited) and holds (`used`)."""

    quota: int | None
    used: int


def _map(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return cast(list[Any], value) if isinstance(value, list) else []


def _count(value: object) -> int | None:
    """A whole number of devices from a Kubernetes quantity (int or string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not value:
        return None
    for suffix, factor in _SUFFIXES.items():
        if value.endswith(suffix):
            number = _count(value[: -len(suffix)])
            return None if number is None else number * factor
    try:
        return int(Decimal(value))
    except (InvalidOperation, ValueError):
        return None


def _gpus(resources: Mapping[str, Any]) -> int | None:
    counts = [_count(v) for k, v in resources.items() if "gpu" in k.lower()]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _kai(spec: Mapping[str, Any], status: Mapping[str, Any]) -> QueueQuota | None:
    quota = _count(_map(_map(spec.get("resources")).get("gpu")).get("quota"))
    allocated = status.get("allocatedNonPreemptible")
    used = _gpus(_map(allocated if allocated is not None else status.get("allocated")))
    if quota is None and used is None:
        return None
    return QueueQuota(None if quota is None or quota < 0 else quota, used or 0)


def _flavor_total(entries: list[Any], field: str) -> int | None:
    counts = [
        _count(_map(resource).get(field))
        for flavor in entries
        for resource in _list(_map(flavor).get("resources"))
        if "gpu" in str(_map(resource).get("name", "")).lower()
    ]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _kueue(spec: Mapping[str, Any], status: Mapping[str, Any]) -> QueueQuota | None:
    flavors = [
        f for group in _list(spec.get("resourceGroups")) for f in _list(_map(group).get("flavors"))
    ]
    quota = _flavor_total(flavors, "nominalQuota")
    used = _flavor_total(_list(status.get("flavorsReservation")), "total")
    if quota is None and used is None:
        return None
    return QueueQuota(quota, used or 0)


def _volcano(spec: Mapping[str, Any], status: Mapping[str, Any]) -> QueueQuota | None:
    quota = _gpus(_map(spec.get("capability")))
    if quota is None:
        quota = _gpus(_map(spec.get("deserved")))
    used = _gpus(_map(status.get("allocated")))
    if quota is None and used is None:
        return None
    return QueueQuota(quota, used or 0)


def queue_quota(manifest: Mapping[str, Any]) -> QueueQuota | None:
    """The GPU quota and usage a KAI Queue, Kueue ClusterQueue or Volcano Queue reports."""
    group = str(manifest.get("apiVersion", "")).split("/")[0]
    provider = PROVIDER_OF_GROUP.get(group)
    kind = manifest.get("kind")
    spec, status = _map(manifest.get("spec")), _map(manifest.get("status"))
    if provider == KAI and kind == "Queue":
        return _kai(spec, status)
    if provider == KUEUE and kind == "ClusterQueue":
        return _kueue(spec, status)
    if provider == VOLCANO and kind == "Queue":
        return _volcano(spec, status)
    return None


def cluster_queue(manifest: Mapping[str, Any]) -> str | None:
    """The ClusterQueue a Kueue LocalQueue draws from, when it says."""
    if manifest.get("kind") != "LocalQueue":
        return None
    name = _map(manifest.get("spec")).get("clusterQueue")
    return name if isinstance(name, str) and name else None
