"""What every in-cluster scheduler says about itself: the `Scheduler` protocol.

One module per scheduler subclasses `Scheduler` (a frozen dataclass whose fields
are its settings, read from its own sub-block of `spec.scheduling`) and overrides
only what it does differently from the default scheduler: the scheduler name it
implies, the keys it reserves or reads to form gangs, where it reads a queue, how
a queue or a priority must look, the gang object it needs, the guards that catch
what it would silently mishandle, the labels it refuses to change on a running
workload, and its limit on LeaderWorkerSet names.
`modelplane.conventions.schedulers.SCHEDULERS` lists them.
"""

import abc
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, NamedTuple

from modelplane_models.inference_cluster import Scheduling

from modelplane.conventions.workload import Unit, Workload
from modelplane.core.charts import Component
from modelplane.core.issues import Issue, warning
from modelplane.core.kinds import PodSet, WorkloadKind
from modelplane.core.labels import value_error
from modelplane.core.naming import is_dns_subdomain
from modelplane.core.refs import ObjectRef, priority_class
from modelplane.core.vocabulary import Reason

from .quota import QueueQuota

# Where the block lives on an InferenceCluster; every Issue names a field under it.
ROOT: Final = "spec.scheduling"


class Keys(NamedTuple):
    """Labels and annotations a scheduler reads, to be set where it reads them."""

    labels: dict[str, str]
    annotations: dict[str, str]


def no_keys() -> Keys:
    return Keys({}, {})


@dataclass(frozen=True)
class Platform:
    """What the cluster's block resolves to for one replica, as a scheduler reads it.

    `queue` and `labels`/`annotations` are rendered for the replica, `priority` is
    resolved against the cluster's default, and `priority_values` maps the
    PriorityClasses observed on the cluster to their values.
    """

    queue: str | None
    priority: str | None
    labels: Mapping[str, str] = field(hash=False)
    annotations: Mapping[str, str] = field(hash=False)
    priority_values: Mapping[str, int] = field(hash=False)


@dataclass(frozen=True)
class GangObject:
    """The gang object a scheduler reads for one pod set, and how its pods join it."""

    api_version: str
    spec: dict[str, Any] = field(hash=False)
    pod_labels: dict[str, str] = field(hash=False, default_factory=dict[str, str])
    pod_annotations: dict[str, str] = field(hash=False, default_factory=dict[str, str])


@dataclass(frozen=True)
class ReplicaPods:
    """The pods of one disaggregated replica, as its one gang object sees them."""

    minimums: Mapping[str, int]
    """The pods each role needs (its sub-group's minimum)."""
    owners: Collection[WorkloadKind]
    """The kinds the scheduler sees owning the pods."""


# The two fields of default keys a platform sets for every workload.
DefaultKeys = Literal["defaultLabels", "defaultAnnotations"]


class Scheduler(abc.ABC):
    """One in-cluster scheduler. The defaults are the default kube-scheduler's."""

    name: ClassVar[str]
    """`spec.scheduling.provider`."""
    default_scheduler_name: ClassVar[str | None] = None
    """The pods' schedulerName when the platform names none (None: leave it unset)."""
    settings_field: ClassVar[str | None] = None
    """The sub-block of `spec.scheduling` it reads its settings from, if any."""
    has_queues: ClassVar[bool] = True
    no_gangs: ClassVar[str | None] = None
    """Why an explicit `gang.enabled: true` does nothing here, when it cannot gang."""
    reserved_keys: ClassVar[tuple[str, ...]] = ()
    """Label and annotation keys (prefixes end with "/") no ML team may set on pods."""
    gang_keys: ClassVar[tuple[str, ...]] = ()
    """Keys that join a pod to a gang, which no platform default may set either."""
    lws_name_max: ClassVar[int | None] = None
    """A limit on LeaderWorkerSet names stricter than LWS's own, and the rule that
    sets it (`lws_name_rule`)."""
    lws_name_rule: ClassVar[str] = ""
    reads_priority_classes: ClassVar[bool] = False
    """Whether its rules need the cluster's PriorityClass objects."""
    install: ClassVar[Component | None] = None
    """Its Helm chart at a pinned version, installed by a Managed stack (None: nothing to
    install)."""
    queue_crd: ClassVar[str | None] = None
    """The CRD of its queue objects; it comes with the scheduler, so it says the
    scheduler is installed."""
    quota_kind: ClassVar[str | None] = None
    """The kind of its queue objects that reports GPU quota and usage (`read_quota`)."""
    gang_crd: ClassVar[str | None] = None
    """The CRD of the gang object `gang` composes, when `composes_gang()`."""
    own_grouping: ClassVar[str] = ""
    """How the scheduler groups a replica's roles itself when Modelplane composes no
    gang: `split_gang` explains the split with it."""
    installs_after_lws: ClassVar[bool] = False
    """Whether it must start after LeaderWorkerSet's CRDs exist (it watches them)."""

    @classmethod
    def from_block(cls, block: Scheduling, issues: list[Issue]) -> "Scheduler":
        """This scheduler with its settings read from `block`, appending any issue."""
        return cls()

    def reserves(self, key: str) -> bool:
        return any(
            (entry.endswith("/") and key.startswith(entry)) or key == entry
            for entry in self.reserved_keys
        )

    def reserves_label(self, key: str, platform: Platform) -> bool:
        """Whether a pod label `key` is the platform's for this replica: a reserved key,
        or one the scheduler reads only in some configurations."""
        return self.reserves(key)

    def queue_error(self, queue: str) -> str | None:
        """Why a rendered queue name cannot be handed over, or None.

        By default the queue is a label value naming a queue object.
        """
        if not queue.strip():
            return "the queue renders empty"
        problem = value_error(queue)
        if problem is None and not is_dns_subdomain(queue):
            problem = "must be a lowercase DNS subdomain naming the queue object"
        return f"queue {queue!r} is not a valid label value: {problem}" if problem else None

    def priority_error(self, priority: str) -> str | None:
        """Why this scheduler cannot carry `priority`, beyond the generic rules, or None."""
        return None

    def object_keys(self, kind: WorkloadKind, platform: Platform) -> Keys:
        """Keys it reads on the workload object itself."""
        return no_keys()

    def keep_running(
        self, workload: Workload, labels: dict[str, str], observed: Mapping[str, Any]
    ) -> list[Issue]:
        """Put back into `labels` (what `workload`'s object is to carry) the observed
        value of each label the scheduler refuses to change on the object as it runs
        (`observed`, read back from the cluster); a Warning for each label kept."""
        return []

    def pod_keys(self, platform: Platform) -> Keys:
        """Keys it reads on every pod, before any gang keys."""
        return no_keys()

    def preset_labels(self, queued: bool) -> frozenset[str]:
        """Every label key `object_keys` or `pod_keys` may set (`queued`: a queue is set)."""
        return frozenset()

    def preset_annotations(self, queued: bool) -> frozenset[str]:
        """Every annotation key `object_keys` or `pod_keys` may set."""
        return frozenset()

    def misplaced(self, labels: Collection[str], annotations: Collection[str]) -> list[Issue]:
        """Warnings for default label or annotation keys it reads only in another form."""
        return []

    def composes_gang(self) -> bool:
        """Whether Modelplane, rather than the scheduler, groups multi-pod workers."""
        return False

    def gang(self, name: str, pods: PodSet, platform: Platform) -> GangObject | None:
        """The gang object for `pods`, named `name`, when `composes_gang()`."""
        return None

    def replica_gang(self, name: str, pods: ReplicaPods, platform: Platform) -> GangObject | None:
        """One gang object named `name` for the pods of a disaggregated replica, with
        a sub-group per role, when the scheduler has sub-groups and nothing else
        groups those pods."""
        return None

    def sub_group_keys(self, role: str) -> Keys:
        """The keys that put a pod of `role` in its sub-group of `replica_gang`."""
        return no_keys()

    def split_gang(self) -> str:
        """Why a disaggregated replica is not one all-or-nothing gang here."""
        if self.own_grouping and not self.composes_gang():
            return self.own_grouping
        return f"{self.name} has no sub-groups Modelplane composes"

    def guard(self, workload: Workload, unit: Unit, platform: Platform) -> list[Issue]:
        """Issues for what this scheduler would silently mishandle in `unit`."""
        return []

    def chart_values(self) -> dict[str, Any]:
        """Helm values its chart needs for these settings."""
        return {}

    def lws_values(self) -> dict[str, Any]:
        """Helm values the LeaderWorkerSet chart needs to work with it."""
        return {}

    def installs_before_lws(self) -> bool:
        """Whether LeaderWorkerSet must start after it (LWS creates its gang objects)."""
        return False

    def queue_object(self, platform: Platform, tenant_namespace: str | None) -> ObjectRef | None:
        """The queue object the pods of `platform` go to, when it has queues (None also
        when it lives in the tenant namespace and `tenant_namespace` is unknown)."""
        return None

    def priority_objects(self, priority: str) -> tuple[ObjectRef, ...]:
        """What must exist on the cluster for pods at `priority` to be admitted."""
        return (priority_class(priority),)

    def over_quota_priorities(self) -> frozenset[str]:
        """Priorities it lets borrow or preempt beyond a queue's quota by its own
        settings, beside the platform's `overQuotaPriorities`."""
        return frozenset()

    @classmethod
    def queue_group(cls) -> str | None:
        """The API group of its queue objects (that of `queue_crd`), if it has queues."""
        return cls.queue_crd.split(".", 1)[1] if cls.queue_crd else None

    @classmethod
    def read_quota(cls, spec: Mapping[str, Any], status: Mapping[str, Any]) -> QueueQuota | None:
        """The GPU quota and usage a `quota_kind` object in `queue_group()` reports
        (None: it states neither). By default: no queues."""
        return None

    @classmethod
    def quota_parent(cls, kind: str, spec: Mapping[str, Any]) -> ObjectRef | None:
        """The object a queue of `kind` draws its quota from, when not itself."""
        return None


# Where a default key is read when it is misplaced in the other default field.
_READ_AS: Final = {"defaultLabels": "an annotation", "defaultAnnotations": "a label"}


def misplaced_keys(
    scheduler: Scheduler, present: Collection[str], keys: tuple[str, ...], field_name: DefaultKeys
) -> list[Issue]:
    """A warning for each of `keys` among `present`, the keys of `field_name`, which
    the scheduler reads only in the other form."""
    return [
        warning(
            f"{ROOT}.{field_name}[{key}]",
            f"{scheduler.name} reads {key} only as {_READ_AS[field_name]}",
            Reason.SCHEDULING_FIELD_IGNORED,
        )
        for key in keys
        if key in present
    ]
