"""When a remote object counts as ready, and whether a replica is serving.

A workload's own controller says when it serves; its kind says which condition
(`modelplane.core.kinds`). Namespaces and claim templates have no runtime state:
created is ready.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane.core import kinds

from .model import RemoteObject

OBSERVED_READINESS: dict[str, Any] = {"policy": "SuccessfulCreate"}


def workload_readiness(kind: str) -> dict[str, Any]:
    """The Object `spec.readiness` block for a workload of `kind`."""
    return kinds.named(kind).readiness()


def workload_status(
    manifest_kind: str, observed_object: Mapping[str, Any] | None
) -> tuple[bool, str]:
    """Whether an observed remote workload serves, and a message saying why.

    `observed_object` is the workload as read back from its cluster (for a
    provider-kubernetes Object, `status.atProvider.manifest`), or None when
    it has not been observed yet.
    """
    return kinds.named(manifest_kind).serving(observed_object)


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
