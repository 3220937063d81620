"""Kueue (v0.19): an admission layer over the pods' own scheduler.

Kueue reads the queue and the WorkloadPriorityClass from labels on the workload
object (Deployment, LeaderWorkerSet or LLMInferenceService), and groups
LeaderWorkerSet pods itself, so Modelplane composes no gang. It refuses some
label changes on a running workload, which Modelplane then keeps as read back
(`keep_running`). A Managed stack's Kueue maps the GPU DeviceClass Modelplane's
claims name (`MANAGER_CONFIG`).
"""

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from modelplane_models.deployment import Deployment as DeploymentModel
from modelplane_models.inference_cluster import Scheduling
from modelplane_models.leader_worker_set import LeaderWorkerSet as LeaderWorkerSetModel

from modelplane.conventions.workload import Workload
from modelplane.core.charts import Chart, Component
from modelplane.core.issues import Issue, warning
from modelplane.core.kinds import LLM_INFERENCE_SERVICE, WorkloadKind
from modelplane.core.kinds.base import as_list
from modelplane.core.labels import value_error
from modelplane.core.observed import as_map, workload
from modelplane.core.refs import ObjectRef, priority_class
from modelplane.core.vocabulary import Reason

from .base import ROOT, Keys, Platform, Scheduler, misplaced_keys, no_keys
from .names import read_names
from .quota import QueueQuota, count, quota_count, reported

QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL: Final = "kueue.x-k8s.io/priority-class"
POD_GROUP_LABEL: Final = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_COUNT: Final = "kueue.x-k8s.io/pod-group-total-count"
API: Final = "kueue.x-k8s.io/v1beta2"
CHART: Final = Chart("kueue", repository="oci://registry.k8s.io/kueue/charts")
# Kueue names an LWS group's Workload `leaderworkerset-<lws>-<group>-<hash5>`, and
# writes that name into the group's pods as pod-group-name and prebuilt-workload-name.
# Since 0.18 (WorkloadIdentifierAnnotations, Beta, on by default) those are
# annotations and the name has no limit beyond LWS's own. They are labels, which
# hold 63 characters and so leave 39 for the LWS name, only on Kueue before 0.18 or
# with that gate turned off. 39 is kept as a conservative bound: Modelplane cannot
# see a cluster's Kueue version or gates, and raising the bound would rename every
# running LeaderWorkerSet and LLMInferenceService whose readable name it now hashes.
LWS_NAME_MAX: Final = 39
# The DeviceClass every Modelplane pod claims its GPUs from (its ResourceClaimTemplate),
# and the resource Kueue counts them as. Kueue 0.18+ (KueueDRAIntegration, on by
# default) refuses to admit a Workload whose claims name a DeviceClass its
# configuration does not map, so a Managed stack maps this one. `nvidia.com/gpu` is
# the name GPU quotas already use, and read_quota counts it as GPUs.
GPU_DEVICE_CLASS: Final = "gpu.nvidia.com"
GPU_RESOURCE: Final = "nvidia.com/gpu"
# The chart's `managerConfig.controllerManagerConfigYaml` is one string, not a map
# Helm merges into: setting it replaces the whole configuration. So this is the
# chart's default at the pinned 0.19.2 (charts/kueue/values.yaml, comments left
# out), with only the `resources` block added.
MANAGER_CONFIG: Final = f"""\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency:
    Job.batch: 5
    Pod: 5
    Workload.kueue.x-k8s.io: 10
    LocalQueue.kueue.x-k8s.io: 5
    ClusterQueue.kueue.x-k8s.io: 5
    ResourceFlavor.kueue.x-k8s.io: 1
clientConnection:
  qps: 300
  burst: 500
integrations:
  frameworks:
  - "batch/job"
  - "kubeflow.org/mpijob"
  - "ray.io/rayjob"
  - "ray.io/rayservice"
  - "ray.io/raycluster"
  - "jobset.x-k8s.io/jobset"
  - "workload.codeflare.dev/appwrapper"
  - "trainer.kubeflow.org/trainjob"
  - "pod"
  - "deployment"
  - "statefulset"
  - "leaderworkerset.x-k8s.io/leaderworkerset"
resources:
  deviceClassMappings:
  - name: {GPU_RESOURCE}
    deviceClassNames:
    - {GPU_DEVICE_CLASS}
"""


@dataclass(frozen=True)
class Kueue(Scheduler):
    """`workload_priority_classes`: priorities that are also WorkloadPriorityClasses."""

    name = "Kueue"
    settings_field = "kueue"
    reserved_keys = ("kueue.x-k8s.io/",)
    gang_keys = (POD_GROUP_LABEL, POD_GROUP_COUNT)
    own_grouping = "Kueue admits each role's workload object as a workload of its own"
    install = Component.helm("kueue", "Kueue", "0.19.2", CHART, namespace="kueue-system")
    queue_crd = "localqueues.kueue.x-k8s.io"
    # A LocalQueue holds no quota of its own (`quota_parent`).
    quota_kind = "ClusterQueue"
    # Kueue manages LeaderWorkerSets only when their CRD exists as it starts.
    installs_after_lws = True
    lws_name_max = LWS_NAME_MAX
    lws_name_rule = (
        "Kueue's workload identifiers on pods (labels before Kueue 0.18 or with its "
        "WorkloadIdentifierAnnotations gate off; Modelplane keeps to them on every cluster)"
    )

    workload_priority_classes: frozenset[str] = field(default_factory=frozenset[str])

    @classmethod
    def from_block(cls, block: Scheduling, issues: list[Issue]) -> "Kueue":
        if block.kueue is None:
            return cls()
        names = read_names(
            block.kueue.workloadPriorityClasses,
            f"{ROOT}.kueue.workloadPriorityClasses",
            "WorkloadPriorityClass",
            issues,
        )
        return cls(workload_priority_classes=frozenset(names or ()))

    @classmethod
    def read_quota(cls, spec: Mapping[str, Any], status: Mapping[str, Any]) -> QueueQuota | None:
        # A ClusterQueue: quota the `nominalQuota` of every flavor's GPU resources;
        # used the `total` of `status.flavorsReservation` (reserved by admitted and
        # admitting workloads).
        flavors = [
            f
            for group in as_list(spec.get("resourceGroups"))
            for f in as_list(as_map(group).get("flavors"))
        ]
        used = _flavor_total(as_list(status.get("flavorsReservation")), "total", count)
        return reported(_flavor_total(flavors, "nominalQuota", quota_count), used)

    @classmethod
    def quota_parent(cls, kind: str, spec: Mapping[str, Any]) -> ObjectRef | None:
        # A LocalQueue's figures are those of the ClusterQueue it draws from.
        name = spec.get("clusterQueue") if kind == "LocalQueue" else None
        return ObjectRef(API, "ClusterQueue", name) if isinstance(name, str) and name else None

    def queue_object(self, platform: Platform, tenant_namespace: str | None) -> ObjectRef | None:
        # A LocalQueue lives in the namespace of the workloads it admits.
        if not platform.queue or tenant_namespace is None:
            return None
        return ObjectRef(API, "LocalQueue", platform.queue, tenant_namespace)

    def priority_objects(self, priority: str) -> tuple[ObjectRef, ...]:
        # A missing WorkloadPriorityClass blocks the Workload, with no fallback.
        if priority in self.workload_priority_classes:
            return (priority_class(priority), ObjectRef(API, "WorkloadPriorityClass", priority))
        return (priority_class(priority),)

    def priority_error(self, priority: str) -> str | None:
        if priority not in self.workload_priority_classes:
            return None
        problem = value_error(priority)
        return None if problem is None else f"{priority!r} as label {PRIORITY_LABEL} {problem}"

    def chart_values(self) -> dict[str, Any]:
        return {"managerConfig": {"controllerManagerConfigYaml": MANAGER_CONFIG}}

    def object_keys(self, kind: WorkloadKind, platform: Platform) -> Keys:
        keys = no_keys()
        if platform.queue:
            keys.labels[QUEUE_LABEL] = platform.queue
        if platform.priority and platform.priority in self.workload_priority_classes:
            keys.labels[PRIORITY_LABEL] = platform.priority
        return keys

    def keep_running(
        self, workload: Workload, labels: dict[str, str], observed: Mapping[str, Any]
    ) -> list[Issue]:
        # Kueue's Deployment and LWS webhooks (v0.19.2) refuse, on update: a queue-name
        # change once the object has ready replicas, and its removal at any time; adding
        # a priority-class once it has ready replicas, and its removal at any time. A
        # refused update blocks every later one (an image roll too), so the observed
        # value stays and the new one reaches the replicas placed from now on (and this
        # one, for a change refused only while replicas are ready, once none is). KServe
        # copies these labels onto its own Deployment or LWS, whose readiness is not
        # read here: an LLMInferenceService counts as running once it exists.
        kind = workload.kind
        running = kind is LLM_INFERENCE_SERVICE or _has_ready_replicas(observed)
        seen = _observed_labels(observed)
        issues: list[Issue] = []
        for key, path in ((QUEUE_LABEL, f"{ROOT}.queue"), (PRIORITY_LABEL, "spec.priority")):
            old, new = seen.get(key), labels.get(key)
            if old == new:
                continue
            removed = old is not None and new is None
            if not (removed or (running and (key == QUEUE_LABEL or old is None))):
                continue
            if old is None:
                labels.pop(key, None)
            else:
                labels[key] = old
            # A removal is refused for good; any other change once no replica is ready.
            later = (
                f"replicas placed from now on get {_shown(key, new)}"
                if removed or kind is LLM_INFERENCE_SERVICE
                else f"it takes {_shown(key, new)} once it has no ready replica, and "
                "replicas placed from now on get it"
            )
            issues.append(
                warning(
                    path,
                    f"{workload.title}: keeps {_shown(key, old)}, since Kueue refuses that change "
                    f"on it as it runs and would then refuse every later update to it; {later}",
                    Reason.SCHEDULING_LABEL_KEPT,
                )
            )
        return issues

    def preset_labels(self, queued: bool) -> frozenset[str]:
        keys = {QUEUE_LABEL} if queued else set[str]()
        if self.workload_priority_classes:
            keys.add(PRIORITY_LABEL)
        return frozenset(keys)

    def misplaced(self, labels: Collection[str], annotations: Collection[str]) -> list[Issue]:
        return misplaced_keys(
            self, annotations, (QUEUE_LABEL, PRIORITY_LABEL), "defaultAnnotations"
        )


def _flavor_total(
    entries: list[Any], field_name: str, read: Callable[[object], int | None]
) -> int | None:
    counts = [
        read(as_map(resource).get(field_name))
        for flavor in entries
        for resource in as_list(as_map(flavor).get("resources"))
        if "gpu" in str(as_map(resource).get("name", "")).lower()
    ]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


# The kinds whose ready replicas Kueue's webhooks read, by the kind a read-back names.
_READY_MODELS: Final[Mapping[str, type[DeploymentModel] | type[LeaderWorkerSetModel]]] = {
    "Deployment": DeploymentModel,
    "LeaderWorkerSet": LeaderWorkerSetModel,
}


def _has_ready_replicas(observed: Mapping[str, Any]) -> bool:
    # What Kueue's webhooks test (`status.readyReplicas > 0`), read through the kind's
    # model: a Deployment's and a LeaderWorkerSet's status name the count alike.
    model = _READY_MODELS.get(str(observed.get("kind", "")))
    read = workload(observed, model) if model is not None else None
    ready = read.status.readyReplicas if read is not None and read.status is not None else None
    return ready is not None and ready > 0


def _observed_labels(observed: Mapping[str, Any]) -> dict[str, str]:
    labels = as_map(as_map(observed.get("metadata")).get("labels"))
    return {k: v for k, v in labels.items() if isinstance(v, str)}


def _shown(key: str, value: str | None) -> str:
    return f"no {key} label" if value is None else f"{key}={value}"
