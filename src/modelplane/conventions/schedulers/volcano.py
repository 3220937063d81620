"""Volcano (v1.15): queues as annotations; gangs through the LWS controller or composed.

The queue is an annotation on pods and on a LeaderWorkerSet (which the LWS
controller's Volcano provider reads). With `lwsGangScheduling` the LWS controller
creates each LWS group's PodGroup, with no priority (`guard` warns); without it
Modelplane composes them. A disaggregated replica none of whose roles is an LWS is
one PodGroup Modelplane composes either way (`replica_gang`).
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

from modelplane_models.inference_cluster import Scheduling

from modelplane.conventions.workload import Unit, Workload
from modelplane.core.charts import Chart, Component
from modelplane.core.issues import Issue, warning
from modelplane.core.kinds import LEADER_WORKER_SET, LLM_INFERENCE_SERVICE, PodSet, WorkloadKind
from modelplane.core.naming import is_dns_subdomain
from modelplane.core.observed import as_map
from modelplane.core.refs import ObjectRef
from modelplane.core.vocabulary import Reason

from .base import ROOT, GangObject, Keys, Platform, ReplicaPods, Scheduler, misplaced_keys, no_keys
from .quota import QueueQuota, gpus, reported

QUEUE_ANNOTATION: Final = "scheduling.volcano.sh/queue-name"
GROUP_ANNOTATION: Final = "scheduling.k8s.io/group-name"
JOB_GROUP_ANNOTATION: Final = "scheduling.volcano.sh/group-name"
# The task a pod belongs to, which minTaskMember counts by (Volcano's job controller
# sets it on a vcjob's pods).
TASK_ANNOTATION: Final = "volcano.sh/task-spec"
DEFAULT_QUEUE: Final = "default"
# Volcano's scheduling API, one group version for its Queue and its PodGroup kinds.
API: Final = "scheduling.volcano.sh/v1beta1"
CHART: Final = Chart("volcano", repository="https://volcano-sh.github.io/helm-charts")


@dataclass(frozen=True)
class Volcano(Scheduler):
    """`lws_gang_scheduling`: whether the cluster's LWS controller creates Volcano
    PodGroups (`gangSchedulingManagement.schedulerProvider: volcano`)."""

    name = "Volcano"
    default_scheduler_name = "volcano"
    settings_field = "volcano"
    reserved_keys = ("scheduling.volcano.sh/", "volcano.sh/", GROUP_ANNOTATION)
    gang_keys = (GROUP_ANNOTATION, JOB_GROUP_ANNOTATION, TASK_ANNOTATION)
    own_grouping = (
        "the LeaderWorkerSet controller's Volcano provider gangs each LWS group on "
        "its own; volcano.lwsGangScheduling: false makes the replica one PodGroup "
        "with a task per role"
    )
    install = Component.helm("volcano", "Volcano", "1.15.1", CHART, namespace="volcano-system")
    queue_crd = "queues.scheduling.volcano.sh"
    quota_kind = "Queue"
    gang_crd = "podgroups.scheduling.volcano.sh"

    lws_gang_scheduling: bool = True

    @classmethod
    def from_block(cls, block: Scheduling, issues: list[Issue]) -> "Volcano":
        if block.volcano is None:
            return cls()
        return cls(lws_gang_scheduling=block.volcano.lwsGangScheduling is not False)

    @classmethod
    def read_quota(cls, spec: Mapping[str, Any], status: Mapping[str, Any]) -> QueueQuota | None:
        # Quota `spec.capability` (a hard cap), else `spec.deserved`; used `status.allocated`.
        quota = gpus(as_map(spec.get("capability")), quota=True)
        if quota is None:
            quota = gpus(as_map(spec.get("deserved")), quota=True)
        return reported(quota, gpus(as_map(status.get("allocated"))))

    def queue_error(self, queue: str) -> str | None:
        if not queue.strip():
            return "the queue renders empty"
        if not is_dns_subdomain(queue):
            return f"queue {queue!r} must be a DNS subdomain of at most 253 characters"
        return None

    def object_keys(self, kind: WorkloadKind, platform: Platform) -> Keys:
        keys = no_keys()
        if platform.queue and kind is LEADER_WORKER_SET:
            keys.annotations[QUEUE_ANNOTATION] = platform.queue
        return keys

    def pod_keys(self, platform: Platform) -> Keys:
        keys = no_keys()
        if platform.queue:
            keys.annotations[QUEUE_ANNOTATION] = platform.queue
        return keys

    def preset_annotations(self, queued: bool) -> frozenset[str]:
        return frozenset({QUEUE_ANNOTATION}) if queued else frozenset()

    def misplaced(self, labels: Collection[str], annotations: Collection[str]) -> list[Issue]:
        return misplaced_keys(self, labels, (QUEUE_ANNOTATION,), "defaultLabels")

    def composes_gang(self) -> bool:
        return not self.lws_gang_scheduling

    def chart_values(self) -> dict[str, Any]:
        # DRA claims are scheduled only with the scheduler's feature gate on.
        return {"custom": {"scheduler_feature_gates": "DynamicResourceAllocation=true"}}

    def lws_values(self) -> dict[str, Any]:
        if not self.lws_gang_scheduling:
            return {}
        return {"gangSchedulingManagement": {"schedulerProvider": "volcano"}}

    def installs_before_lws(self) -> bool:
        # The LWS controller's Volcano provider creates Volcano PodGroups.
        return self.lws_gang_scheduling

    def queue_object(self, platform: Platform, tenant_namespace: str | None) -> ObjectRef:
        return ObjectRef(API, "Queue", platform.queue or DEFAULT_QUEUE)

    def gang(self, name: str, pods: PodSet, platform: Platform) -> GangObject:
        spec: dict[str, Any] = {"minMember": pods.pods}
        if platform.queue:
            spec["queue"] = platform.queue
        if platform.priority:
            spec["priorityClassName"] = platform.priority
        return GangObject(API, spec, pod_annotations={GROUP_ANNOTATION: name})

    def replica_gang(self, name: str, pods: ReplicaPods, platform: Platform) -> GangObject | None:
        # The LWS provider's pod webhook points every LWS pod at its own per-group
        # PodGroup, over any annotation Modelplane set; pods of other owners (a
        # replica of Deployments only) it leaves alone, and Volcano's controller makes
        # no PodGroup of its own for a pod that already names one.
        if self.lws_gang_scheduling and LEADER_WORKER_SET in pods.owners:
            return None
        spec: dict[str, Any] = {
            "minMember": sum(pods.minimums.values()),
            "minTaskMember": dict(sorted(pods.minimums.items())),
        }
        if platform.queue:
            spec["queue"] = platform.queue
        if platform.priority:
            spec["priorityClassName"] = platform.priority
        return GangObject(API, spec, pod_annotations={GROUP_ANNOTATION: name})

    def sub_group_keys(self, role: str) -> Keys:
        return Keys({}, {TASK_ANNOTATION: role})

    def guard(self, workload: Workload, unit: Unit, platform: Platform) -> list[Issue]:
        return self._queue_guard(workload, unit, platform) + self._priority_guard(unit, platform)

    def _priority_guard(self, unit: Unit, platform: Platform) -> list[Issue]:
        if not (
            self.lws_gang_scheduling
            and unit.pod_set.owner is LEADER_WORKER_SET
            and platform.priority
        ):
            return []
        return [
            warning(
                f"{ROOT}.volcano.lwsGangScheduling",
                f"{unit.title}: the LWS Volcano provider creates each group's PodGroup "
                "without a priorityClassName, and Volcano orders and preempts a gang by "
                "its PodGroup's priority alone, so this gang runs at the cluster's "
                f"default priority (its globalDefault PriorityClass, else 0), not "
                f"{platform.priority!r}; the pods' priorityClassName orders them only "
                "within the gang. Turn the LWS provider off and set "
                "volcano.lwsGangScheduling: false: Modelplane's own PodGroup carries it",
                Reason.PRIORITY_NOT_EXPRESSIBLE,
            )
        ]

    def _queue_guard(self, workload: Workload, unit: Unit, platform: Platform) -> list[Issue]:
        queue = platform.queue
        if not (
            workload.kind is LLM_INFERENCE_SERVICE
            and unit.pod_set.owner is LEADER_WORKER_SET
            and self.lws_gang_scheduling
            and queue
            and queue != DEFAULT_QUEUE
        ):
            return []
        return [
            warning(
                f"{ROOT}.queue",
                f"{unit.title}: the LWS Volcano provider reads the queue only from the "
                f"LeaderWorkerSet's {QUEUE_ANNOTATION} annotation, which KServe "
                f"does not copy from an LLMInferenceService, so its PodGroups go to queue "
                f"'{DEFAULT_QUEUE}', not {queue!r}; enable Volcano's namespace "
                "queue policy, or set volcano.lwsGangScheduling: false",
                Reason.QUEUE_NOT_EXPRESSIBLE,
            )
        ]
