"""KAI (v0.17): queues as labels, gangs by its podgrouper, quota for
non-preemptible work.

KAI's podgrouper groups every pod that names KAI's scheduler and has an owner, and
rewrites its `pod-group-name` to a PodGroup of its own (NVIDIA/KAI-Scheduler
`pkg/podgrouper/pod_controller.go`, `Reconcile`): no annotation or label takes one
workload out of it. So Modelplane composes no KAI PodGroup; a PodGroup it composed
would stay empty while the pods ran in the podgrouper's groups.

KAI admits a non-preemptible group only within its queue's quota, so such a
workload in a queue without quota never schedules; `guard` warns before the pods
go Pending. Whether a workload is preemptible is decided, first match wins, by:

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

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from modelplane_models.inference_cluster import PodGrouper, Scheduling

from modelplane.conventions.workload import Unit, Workload
from modelplane.core.charts import Chart, Component
from modelplane.core.issues import Issue, warning
from modelplane.core.kinds import WorkloadKind
from modelplane.core.labels import key_error
from modelplane.core.observed import as_map
from modelplane.core.refs import ObjectRef
from modelplane.core.vocabulary import Reason

from .base import ROOT, Keys, Platform, Scheduler, misplaced_keys, no_keys
from .names import read_names
from .quota import QueueQuota, amount, gpus, reported

QUEUE_LABEL: Final = "kai.scheduler/queue"
LEGACY_QUEUE_LABEL: Final = "runai/queue"
DEFAULT_QUEUE: Final = "default-queue"
# With no queue label, KAI's podgrouper takes the queue from this label on the top
# owner, then on the pod: queue `<project>`, or `<project>-<node pool>` when the pod
# also has the node-pool label (KAI's default `global.nodePoolLabelKey`).
PROJECT_LABEL: Final = "project"
NODE_POOL_LABEL: Final = "kai.scheduler/node-pool"
PREEMPTIBILITY_LABEL: Final = "kai.scheduler/preemptibility"
PRIORITY_LABEL: Final = "priorityClassName"
SUBGROUP_LABEL: Final = "kai.scheduler/subgroup-name"
POD_GROUP_ANNOTATION: Final = "pod-group-name"
# The pod keys of KAI's GPU sharing (its `pkg/common/constants`): a fraction or an
# amount of memory of a GPU, on how many devices, in which container, and the GPU
# group KAI records; and under `nvidia.com/`, the per-container fraction requests
# (`nvidia.com/container.<name>.gpu-memory.request` and its siblings) and the legacy
# MIG annotations (`nvidia.com/mig-1g.10gb`) KAI's admission reads as GPU requests.
# With sharing enabled KAI binds such a pod to a slice of a GPU through its own
# reservation pods, outside the replica's DRA claim and outside what the placement
# counted, so no team template may set them.
GPU_SHARING_KEYS: Final = (
    "nvidia.com/",
    "gpu-fraction",
    "gpu-fraction.limit",
    "gpu-fraction-container-name",
    "gpu-fraction-num-devices",
    "gpu-memory",
    "gpu-memory.limit",
    "mps",
    "runai-gpu-group",
    "runai-gpu-group/",
)
PREEMPTIBLE: Final = "preemptible"
NON_PREEMPTIBLE: Final = "non-preemptible"
# A Queue's quota that means no limit (KAI's UnlimitedResourceQuantity).
UNLIMITED: Final = -1
# KAI treats a PriorityClass value at or above this as non-preemptible.
NON_PREEMPTIBLE_FROM: Final = 100
# The PriorityClasses KAI installs, and the class its podgrouper assumes for a
# pod that names none, by the kind of the pod's top owner.
BUILTIN_PRIORITIES: Final[Mapping[str, int]] = {
    "train": 50,
    "build-preemptible": 75,
    "build": 100,
    "inference": 125,
}
KIND_DEFAULT_PRIORITY: Final[Mapping[str, str]] = {
    "Deployment": "inference",
    "LeaderWorkerSet": "train",
}
QUEUE_API: Final = "scheduling.run.ai/v2"
CHART: Final = Chart("kai-scheduler", repository="oci://ghcr.io/kai-scheduler/kai-scheduler")


@dataclass(frozen=True)
class KAI(Scheduler):
    """`spec.scheduling.kai`: what Modelplane cannot learn from the cluster itself.

    `queues_with_quota` is None when the platform declared nothing; then only
    KAI's own `default-queue`, which has no quota on a fresh install, is known to
    lack one.
    """

    name = "KAI"
    default_scheduler_name = "kai-scheduler"
    settings_field = "kai"
    reserved_keys = (
        "kai.scheduler/",
        LEGACY_QUEUE_LABEL,
        PRIORITY_LABEL,
        POD_GROUP_ANNOTATION,
        *GPU_SHARING_KEYS,
    )
    gang_keys = (POD_GROUP_ANNOTATION, SUBGROUP_LABEL)
    reads_priority_classes = True
    own_grouping = (
        "KAI's podgrouper gangs each role's workload on its own, and KAI has no "
        "per-workload opt-out from it that would let one PodGroup hold both roles"
    )
    install = Component.helm("kai", "KAI Scheduler", "v0.17.0", CHART)
    queue_crd = "queues.scheduling.run.ai"
    quota_kind = "Queue"

    queue_label_key: str = QUEUE_LABEL
    queues_with_quota: frozenset[str] | None = None
    preemptible_priorities: frozenset[str] = field(default_factory=frozenset[str])

    def over_quota_priorities(self) -> frozenset[str]:
        # KAI schedules preemptible work over quota.
        return self.preemptible_priorities

    @classmethod
    def read_quota(cls, spec: Mapping[str, Any], status: Mapping[str, Any]) -> QueueQuota | None:
        # Used: the non-preemptible allocation (the only kind quota limits), else
        # `allocated`. Quota: `spec.resources.gpu.quota`, a number in fractions of a
        # GPU that KAI compares as a float (`isAllocatedNonPreemptibleOverQuota`):
        # only exactly -1 is unlimited, a fraction admits its whole GPUs, and any
        # other negative admits none. A value that cannot be read (the CRD admits only
        # numbers) is taken as no quota, so no replica is sent on a guess to a queue
        # that may never admit it. An absent quota is not stated: KAI reads it as 0,
        # but an observation without the Queue's spec (a render's simulated Observe
        # Object) looks the same, so it bounds nothing (design/limits.md).
        allocated = status.get("allocatedNonPreemptible")
        used = gpus(as_map(allocated if allocated is not None else status.get("allocated")))
        stated = as_map(as_map(spec.get("resources")).get("gpu")).get("quota")
        if stated is None:
            return reported(None, used)
        quota = amount(stated)
        if quota == UNLIMITED:
            return QueueQuota(None, used or 0)
        return QueueQuota(max(0, math.floor(quota)) if quota is not None else 0, used or 0)

    @classmethod
    def from_block(cls, block: Scheduling, issues: list[Issue]) -> "KAI":
        raw = block.kai
        if raw is None:
            return cls()
        path = f"{ROOT}.kai"
        key = raw.queueLabelKey or QUEUE_LABEL
        if (problem := key_error(key)) is not None:
            issues.append(
                Issue(
                    f"{path}.queueLabelKey",
                    f"invalid label key {key!r}: {problem}",
                    Reason.INVALID_SCHEDULING,
                )
            )
            key = QUEUE_LABEL
        quota = read_names(raw.queuesWithQuota, f"{path}.queuesWithQuota", "Queue", issues)
        preemptible = read_names(
            raw.preemptiblePriorities, f"{path}.preemptiblePriorities", "PriorityClass", issues
        )
        # A StrEnum: an unvalidated schema default (the plain string) compares alike.
        if raw.podGrouper == PodGrouper.MODELPLANE:
            issues.append(
                warning(
                    f"{path}.podGrouper",
                    "KAI's podgrouper cannot be turned off for a workload: it regroups "
                    "every owned pod that names KAI's scheduler and rewrites its "
                    f"{POD_GROUP_ANNOTATION}, so a PodGroup Modelplane composed would stay "
                    "empty. Modelplane composes none and KAI groups the pods, as with "
                    "Automatic; a disaggregated replica's roles are not one gang",
                    Reason.SCHEDULING_FIELD_IGNORED,
                )
            )
        return cls(
            queue_label_key=key,
            queues_with_quota=None if quota is None else frozenset(quota),
            preemptible_priorities=frozenset(preemptible or ()),
        )

    def reserves_label(self, key: str, platform: Platform) -> bool:
        # KAI's podgrouper reads the unprefixed `project` label as the queue only when
        # no queue label is set (v0.17.0 `CalcPodGroupQueue`), and never an annotation:
        # with no platform queue an ML team that set it would pick its own queue, maybe
        # another team's; with one, it is the team's own label.
        queued = platform.queue is not None or self.queue_label_key in platform.labels
        return self.reserves(key) or (key == PROJECT_LABEL and not queued)

    def object_keys(self, kind: WorkloadKind, platform: Platform) -> Keys:
        return self.pod_keys(platform)

    def pod_keys(self, platform: Platform) -> Keys:
        keys = no_keys()
        if platform.queue:
            keys.labels[self.queue_label_key] = platform.queue
        return keys

    def preset_labels(self, queued: bool) -> frozenset[str]:
        return frozenset({self.queue_label_key}) if queued else frozenset()

    def misplaced(self, labels: Collection[str], annotations: Collection[str]) -> list[Issue]:
        found = misplaced_keys(
            self,
            annotations,
            (self.queue_label_key, PROJECT_LABEL),
            "defaultAnnotations",
        )
        if LEGACY_QUEUE_LABEL in labels and self.queue_label_key != LEGACY_QUEUE_LABEL:
            found.append(
                warning(
                    f"{ROOT}.defaultLabels[{LEGACY_QUEUE_LABEL}]",
                    f"KAI v0.6+ reads the queue from {self.queue_label_key}, not "
                    f"{LEGACY_QUEUE_LABEL}; use spec.scheduling.queue, or set "
                    f"kai.queueLabelKey if the cluster pins the legacy key",
                    Reason.SCHEDULING_FIELD_IGNORED,
                )
            )
        return found

    def chart_values(self) -> dict[str, Any]:
        # The chart renders kai-config's spec.global.queueLabelKey from this value.
        if self.queue_label_key == QUEUE_LABEL:
            return {}
        return {"podgrouper": {"queueLabelKey": self.queue_label_key}}

    def queue_object(self, platform: Platform, tenant_namespace: str | None) -> ObjectRef:
        return ObjectRef(QUEUE_API, "Queue", self.queue_for(platform))

    def queue_for(self, platform: Platform) -> str:
        """The queue KAI's podgrouper will resolve for these pods (`CalcPodGroupQueue`):
        the queue label, else the platform's `project` label (suffixed with the node
        pool the pods are labelled with), else KAI's `default-queue`. The platform's
        labels are on both the owner and the pods, so owner-before-pod does not matter.
        """
        queue = platform.queue or platform.labels.get(self.queue_label_key)
        if queue:
            return queue
        project = platform.labels.get(PROJECT_LABEL)
        if not project:
            return DEFAULT_QUEUE
        pool = platform.labels.get(NODE_POOL_LABEL)
        return f"{project}-{pool}" if pool is not None else project

    def guard(self, workload: Workload, unit: Unit, platform: Platform) -> list[Issue]:
        queue = self.queue_for(platform)
        if not self.lacks_quota(queue):
            return []
        verdict, why = self.preemptibility(unit.pod_set.owner.kind, platform)
        if verdict == PREEMPTIBLE:
            return []
        state = "is non-preemptible" if verdict else "may be non-preemptible"
        return [
            warning(
                f"{ROOT}.queue",
                f"{unit.title} {state} ({why}) and goes to KAI queue {queue!r}, which has no "
                "declared quota: KAI admits non-preemptible work only within quota, so its "
                "pods stay Pending. Give the queue quota (and list it in "
                "kai.queuesWithQuota), or use a preemptible priority",
                Reason.QUEUE_WITHOUT_QUOTA,
            )
        ]

    def lacks_quota(self, queue: str) -> bool:
        if self.queues_with_quota is None:
            return queue == DEFAULT_QUEUE
        return queue not in self.queues_with_quota

    def preemptibility(self, owner: str, platform: Platform) -> tuple[str | None, str]:
        """(`preemptible` | `non-preemptible` | None when unknown, why)."""
        priority = platform.priority
        explicit = platform.labels.get(PREEMPTIBILITY_LABEL)
        if explicit in (PREEMPTIBLE, NON_PREEMPTIBLE):
            return explicit, f"label {PREEMPTIBILITY_LABEL}={explicit}"
        if priority is None:
            default = KIND_DEFAULT_PRIORITY[owner]
            value = BUILTIN_PRIORITIES[default]
            return _by_value(value), f"no priority, so KAI's {owner} default {default!r} ({value})"
        if priority in self.preemptible_priorities:
            return PREEMPTIBLE, f"{priority!r} is listed in kai.preemptiblePriorities"
        for source, table in (
            ("PriorityClass", platform.priority_values),
            ("KAI built-in class", BUILTIN_PRIORITIES),
        ):
            if priority in table:
                return _by_value(
                    table[priority]
                ), f"{source} {priority!r} has value {table[priority]}"
        return None, f"the value of PriorityClass {priority!r} is unknown"


def _by_value(value: int) -> str:
    return NON_PREEMPTIBLE if value >= NON_PREEMPTIBLE_FROM else PREEMPTIBLE
