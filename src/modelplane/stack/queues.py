"""Quota and usage of an in-cluster queue, as its scheduler reports them.

An Observe-only Object reports the queue object it reads under
`status.atProvider.manifest`. The scheduler whose queues live in the object's
API group (`Scheduler.queue_group`) reads it when it is of the kind that reports
quota (`Scheduler.quota_kind`, `Scheduler.read_quota`) and says
which object, if another, holds its quota (`Scheduler.quota_parent`): a
scheduler that keeps queues gets queue capacity by implementing those.
"""

from collections.abc import Mapping
from typing import Any

from modelplane.conventions.schedulers import SCHEDULERS, Scheduler
from modelplane.conventions.schedulers.quota import QueueQuota
from modelplane.core.observed import as_map
from modelplane.core.refs import ObjectRef

__all__ = ["QueueQuota", "queue_provider", "queue_quota", "quota_parent"]


def _scheduler(manifest: Mapping[str, Any]) -> type[Scheduler] | None:
    group = str(manifest.get("apiVersion", "")).split("/")[0]
    for scheduler in SCHEDULERS.values():
        if scheduler.queue_group() == group:
            return scheduler
    return None


def queue_provider(manifest: Mapping[str, Any]) -> str | None:
    """The `spec.scheduling.provider` whose queue object `manifest` is, if any."""
    scheduler = _scheduler(manifest)
    return scheduler.name if scheduler is not None else None


def queue_quota(manifest: Mapping[str, Any]) -> QueueQuota | None:
    """The GPU quota and usage a scheduler's queue object reports (None: says nothing)."""
    scheduler = _scheduler(manifest)
    if scheduler is None or manifest.get("kind") != scheduler.quota_kind:
        return None
    return scheduler.read_quota(as_map(manifest.get("spec")), as_map(manifest.get("status")))


def quota_parent(manifest: Mapping[str, Any]) -> ObjectRef | None:
    """The queue object `manifest` draws its quota from, when not itself."""
    scheduler = _scheduler(manifest)
    if scheduler is None:
        return None
    return scheduler.quota_parent(str(manifest.get("kind", "")), as_map(manifest.get("spec")))
