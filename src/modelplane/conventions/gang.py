"""Gang objects for the multi-pod workers a scheduler would not gang on its own.

Rules (see docs/schedulers/):
- Only a LeaderWorkerSet worker is ever a gang. A Deployment worker is one pod,
  and a Deployment's replicas are independent workers, so none is ganged.
- Where the scheduler groups LWS replica groups itself, Modelplane composes
  nothing (`Scheduler.composes_gang` is false): KAI's podgrouper (podGrouper
  Automatic), Kueue's LWS integration, and Volcano through the LWS controller's
  Volcano provider (lwsGangScheduling).
- Otherwise Modelplane composes one PodGroup per LWS (its form is the
  scheduler's, `Scheduler.gang`) and joins its pods to it through the pod
  template. A template is static, so with several replicas the group spans all of
  them (minMember = replicas x size): the whole set starts together or not at
  all, which is reported as a Warning.
- A LeaderReady LWS creates its workers only after the leader is ready, so a
  group of all its pods could never fill: no group is composed, with a Warning.
- Prefill and decode are separate units, each ganged on its own, as every
  scheduler's automatic grouping admits them.
"""

from dataclasses import dataclass, field
from typing import Any

from modelplane.conventions.config import SchedulingConfig
from modelplane.conventions.schedulers import ROOT, Platform
from modelplane.conventions.workload import Unit, Workload
from modelplane.core.issues import Issue, warning
from modelplane.core.kinds.base import mapping
from modelplane.core.naming import hashed_name
from modelplane.core.vocabulary import GROUP, LABEL_MANAGED_BY, LABEL_ROLE, MANAGED_BY, Reason


@dataclass
class Gang:
    pod_labels: dict[str, str] = field(default_factory=dict[str, str])
    pod_annotations: dict[str, str] = field(default_factory=dict[str, str])
    objects: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    issues: list[Issue] = field(default_factory=list[Issue])


def plan_gang(workload: Workload, unit: Unit, config: SchedulingConfig, platform: Platform) -> Gang:
    gang = Gang()
    pods, scheduler = unit.pod_set, config.scheduler
    if not (config.gang_enabled and pods.multi_pod and scheduler.composes_gang()):
        return gang
    if pods.replicas <= 0:
        return gang
    if pods.leader_ready:
        gang.issues.append(
            _limited(
                unit,
                "uses startupPolicy LeaderReady: its workers are created only once the "
                "leader is ready, so no PodGroup of the whole group is composed",
            )
        )
        return gang
    if pods.replicas > 1:
        gang.issues.append(
            _limited(
                unit,
                f"has {pods.replicas} workers of {pods.size} pods; {scheduler.name} cannot "
                "tell LWS groups apart from a static template, so one PodGroup of "
                f"{pods.pods} pods gangs them all together",
            )
        )
    name = gang_name(workload, unit, scheduler.name)
    group = scheduler.gang(name, pods, platform)
    if group is None:
        return gang
    gang.pod_labels.update(group.pod_labels)
    gang.pod_annotations.update(group.pod_annotations)
    gang.objects.append(
        {
            "apiVersion": group.api_version,
            "kind": "PodGroup",
            "metadata": _metadata(workload, unit, name),
            "spec": group.spec,
        }
    )
    return gang


def gang_name(workload: Workload, unit: Unit, provider: str) -> str:
    """Stable, at most 63 characters: it is also a label value (Coscheduling)."""
    part = unit.pod_set.part
    base = f"{workload.name}-{part}" if part else workload.name
    return hashed_name(
        base, provider, workload.kind.kind, workload.namespace or "", workload.name, part
    )


def _metadata(workload: Workload, unit: Unit, name: str) -> dict[str, Any]:
    source = mapping(mapping(workload.manifest.get("metadata")).get("labels"))
    # Only Modelplane's own identity labels carry over; anything else the object
    # holds, well-formed or not, is the workload's business.
    labels = {
        k: v for k, v in source.items() if isinstance(v, str) and k.partition("/")[0] == GROUP
    }
    labels[LABEL_MANAGED_BY] = MANAGED_BY
    if unit.role:
        labels[LABEL_ROLE] = unit.role
    metadata: dict[str, Any] = {"name": name, "labels": dict(sorted(labels.items()))}
    if workload.namespace:
        metadata["namespace"] = workload.namespace
    return metadata


def _limited(unit: Unit, why: str) -> Issue:
    return warning(f"{ROOT}.gang", f"{unit.title} {why}", Reason.GANG_LIMITED)
