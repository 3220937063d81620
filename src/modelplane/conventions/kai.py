"""KAI's quota rule for non-preemptible work, checked before the pods go Pending.

KAI admits a non-preemptible group only within its queue's quota, so such a
workload in a queue without quota never schedules. Whether a workload is
preemptible is decided, first match wins, by:

1. the platform's `kai.scheduler/preemptibility` label (a rendered default label);
2. no priority at all: KAI's default for the pods' owner kind (`inference`,
   non-preemptible, for a Deployment; `train`, preemptible, for a LeaderWorkerSet);
3. the priority being listed in `spec.scheduling.kai.preemptiblePriorities`;
4. the value of a supplied PriorityClass object (KAI: 100 or more is non-preemptible);
5. the value of one of the PriorityClasses KAI installs;
6. otherwise unknown, which is reported as possibly non-preemptible.

A queue is known to have quota when `spec.scheduling.kai.queuesWithQuota` lists
it. With no such list, only KAI's `default-queue` (quota 0 on a fresh install) is
known to lack it.
"""

from collections.abc import Mapping, Sequence
from typing import Any, cast

from modelplane.conventions import providers as pv
from modelplane.conventions.config import ROOT, SchedulingConfig
from modelplane.conventions.workload import Unit
from modelplane.core.issues import Issue, warning
from modelplane.core.vocabulary import Reason


def priority_values(priority_classes: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Name to value of the PriorityClass objects the caller supplied."""
    out: dict[str, int] = {}
    for obj in priority_classes:
        metadata = obj.get("metadata")
        name = (
            cast(Mapping[str, Any], metadata).get("name") if isinstance(metadata, Mapping) else None
        )
        value = obj.get("value")
        if isinstance(name, str) and isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out


def preemptibility(
    priority: str | None,
    owner: str,
    config: SchedulingConfig,
    values: Mapping[str, int],
    platform_labels: Mapping[str, str],
) -> tuple[str | None, str]:
    """(`preemptible` | `non-preemptible` | None when unknown, why)."""
    explicit = platform_labels.get(pv.KAI_PREEMPTIBILITY_LABEL)
    if explicit in (pv.PREEMPTIBLE, pv.NON_PREEMPTIBLE):
        return explicit, f"label {pv.KAI_PREEMPTIBILITY_LABEL}={explicit}"
    if priority is None:
        default = pv.KAI_KIND_DEFAULT_PRIORITY[owner]
        value = pv.KAI_BUILTIN_PRIORITIES[default]
        return _by_value(value), f"no priority, so KAI's {owner} default {default!r} ({value})"
    if priority in config.kai.preemptible_priorities:
        return pv.PREEMPTIBLE, f"{priority!r} is listed in kai.preemptiblePriorities"
    for source, table in (
        ("PriorityClass", values),
        ("KAI built-in class", pv.KAI_BUILTIN_PRIORITIES),
    ):
        if priority in table:
            return _by_value(table[priority]), f"{source} {priority!r} has value {table[priority]}"
    return None, f"the value of PriorityClass {priority!r} is unknown"


def _by_value(value: int) -> str:
    return pv.NON_PREEMPTIBLE if value >= pv.KAI_NON_PREEMPTIBLE_FROM else pv.PREEMPTIBLE


def lacks_quota(queue: str, config: SchedulingConfig) -> bool:
    declared = config.kai.queues_with_quota
    if declared is None:
        return queue == pv.KAI_DEFAULT_QUEUE
    return queue not in declared


def quota_issue(
    unit: Unit,
    queue: str,
    priority: str | None,
    config: SchedulingConfig,
    values: Mapping[str, int],
    platform_labels: Mapping[str, str],
) -> Issue | None:
    if not lacks_quota(queue, config):
        return None
    verdict, why = preemptibility(
        priority, unit.pod_set.owner.kind, config, values, platform_labels
    )
    if verdict == pv.PREEMPTIBLE:
        return None
    state = "is non-preemptible" if verdict else "may be non-preemptible"
    return warning(
        f"{ROOT}.queue",
        f"{unit.title} {state} ({why}) and goes to KAI queue {queue!r}, which has no "
        "declared quota: KAI admits non-preemptible work only within quota, so its pods "
        "stay Pending. Give the queue quota (and list it in kai.queuesWithQuota), or use "
        "a preemptible priority",
        Reason.QUEUE_WITHOUT_QUOTA,
    )
