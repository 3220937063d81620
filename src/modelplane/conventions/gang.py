"""Gang objects for the multi-pod workers a scheduler would not gang on its own.

Rules (see docs/schedulers/):
- Only a LeaderWorkerSet worker is ever a gang. A Deployment worker is one pod,
  and a Deployment's replicas are independent workers, so none is ganged.
- Where the scheduler groups LWS replica groups itself, Modelplane composes
  nothing (`Scheduler.composes_gang` is false): KAI's podgrouper (which groups
  every owned KAI pod, whatever Modelplane puts on it), Kueue's LWS integration,
  and Volcano through the LWS controller's Volcano provider (lwsGangScheduling).
- Otherwise Modelplane composes one PodGroup per LWS (its form is the
  scheduler's, `Scheduler.gang`) and joins its pods to it through the pod
  template. A template is static, so with several replicas the group spans all of
  them (minMember = replicas x size): the whole set starts together or not at
  all, which is reported as a Warning.
- A LeaderReady LWS creates its workers only after the leader is ready, so a
  group of all its pods could never fill: no group is composed, with a Warning.
- A disaggregated replica is one all-or-nothing gang where the scheduler has
  sub-groups and nothing else groups its pods (`plan_replica_gang`): one
  PodGroup of every pod of the replica, with a sub-group per role whose minimum is
  that role's pods (Volcano minTaskMember). Elsewhere prefill and
  decode gang separately, as the scheduler's own grouping admits them, and each
  such replica is reported (`GangLimited`); the Workload API is `workload_api`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane.conventions.config import SchedulingConfig
from modelplane.conventions.schedulers import ROOT, Platform, ReplicaPods, Scheduler
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


@dataclass
class ReplicaGang:
    """The one gang object of a disaggregated replica, and how each role's pods join."""

    object: dict[str, Any]
    pod_labels: dict[str, str]
    pod_annotations: dict[str, str]
    scheduler: Scheduler

    def for_unit(self, unit: Unit) -> Gang:
        keys = self.scheduler.sub_group_keys(unit.role)
        return Gang(
            pod_labels={**self.pod_labels, **keys.labels},
            pod_annotations={**self.pod_annotations, **keys.annotations},
        )


def plan_replica_gang(
    workloads: Sequence[Workload], config: SchedulingConfig, platform: Platform, replica: str
) -> tuple[ReplicaGang | None, list[Issue]]:
    """One gang of every pod of a disaggregated replica, sub-grouped by role, where
    the scheduler can form it; otherwise None, and an issue saying why for a
    replica of several roles."""
    units = [(w, u) for w in workloads for u in w.units if u.pod_set.replicas > 0]
    roles = {u.role for _, u in units}
    scheduler = config.scheduler
    if len(roles) < 2 or not config.gang_enabled or config.workload_api is not None:
        return None, []
    if not any(u.pod_set.leader_ready for _, u in units):
        pods = ReplicaPods(
            minimums={
                role: sum(u.pod_set.pods for _, u in units if u.role == role) for role in roles
            },
            owners=frozenset(u.pod_set.owner for _, u in units),
        )
        namespace = units[0][0].namespace
        name = hashed_name(replica, scheduler.name, namespace or "", replica)
        group = scheduler.replica_gang(name, pods, platform)
        if group is not None:
            metadata = _metadata(units[0][0], None, name)
            replica_gang = ReplicaGang(
                {
                    "apiVersion": group.api_version,
                    "kind": "PodGroup",
                    "metadata": metadata,
                    "spec": group.spec,
                },
                group.pod_labels,
                group.pod_annotations,
                scheduler,
            )
            return replica_gang, []
    where = units[0][0].title if len(workloads) == 1 else f"replica {replica}"
    return None, [
        _limited_at(
            f"{where}: prefill and decode are not one all-or-nothing gang: {scheduler.split_gang()}"
        )
    ]


def gang_name(workload: Workload, unit: Unit, provider: str) -> str:
    """Stable, at most 63 characters: it is also a label value (Coscheduling)."""
    part = unit.pod_set.part
    base = f"{workload.name}-{part}" if part else workload.name
    return hashed_name(
        base, provider, workload.kind.kind, workload.namespace or "", workload.name, part
    )


def _metadata(workload: Workload, unit: Unit | None, name: str) -> dict[str, Any]:
    source = mapping(mapping(workload.manifest.get("metadata")).get("labels"))
    # Only Modelplane's own identity labels carry over; anything else the object
    # holds, well-formed or not, is the workload's business.
    labels = {
        k: v for k, v in source.items() if isinstance(v, str) and k.partition("/")[0] == GROUP
    }
    labels[LABEL_MANAGED_BY] = MANAGED_BY
    # A replica's gang spans its roles: it carries none.
    labels.pop(LABEL_ROLE, None)
    if unit is not None and unit.role:
        labels[LABEL_ROLE] = unit.role
    metadata: dict[str, Any] = {"name": name, "labels": dict(sorted(labels.items()))}
    if workload.namespace:
        metadata["namespace"] = workload.namespace
    return metadata


def _limited(unit: Unit, why: str) -> Issue:
    return _limited_at(f"{unit.title} {why}")


def _limited_at(message: str) -> Issue:
    return warning(f"{ROOT}.gang", message, Reason.GANG_LIMITED)
