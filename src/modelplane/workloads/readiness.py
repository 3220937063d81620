"""Whether a rendered replica is serving.

A workload's own controller says when it serves; its kind says which condition
(`modelplane.core.kinds`).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane.core.kinds import RenderedWorkload


def replica_status(
    workloads: Sequence[RenderedWorkload], observed: Mapping[str, Mapping[str, Any] | None]
) -> tuple[bool, str]:
    """Whether every workload of a rendered replica serves, and why (or why not).

    `observed` maps each workload's key to the workload as read back from its
    cluster (or None). A disaggregated replica serves only when decode and
    prefill both do.
    """
    return replica_serving(workloads, [w.kind.serving(observed.get(w.key)) for w in workloads])


def replica_serving(
    workloads: Sequence[RenderedWorkload], verdicts: Sequence[tuple[bool, str]]
) -> tuple[bool, str]:
    """`replica_status` from each workload's verdict (`WorkloadKind.serving`), worked
    out already, in the order of `workloads`."""
    if not workloads:
        return False, "the replica renders no workload"
    by_key = sorted(range(len(workloads)), key=lambda i: workloads[i].key)
    results = [verdicts[i] for i in by_key]
    if all(ok for ok, _ in results):
        return True, "; ".join(message for _, message in results)
    return False, "; ".join(message for ok, message in results if not ok)
