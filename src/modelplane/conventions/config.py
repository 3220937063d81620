"""The parsed form of `InferenceCluster.spec.scheduling`."""

from dataclasses import dataclass, field
from typing import Final

from modelplane.conventions import providers as pv
from modelplane.conventions.template import Template
from modelplane.core.issues import Issue
from modelplane.core.labels import value_error
from modelplane.core.naming import is_dns_subdomain

# Where the block lives on an InferenceCluster; every Issue names a field under it.
ROOT: Final = "spec.scheduling"


@dataclass(frozen=True)
class KAISettings:
    """`spec.scheduling.kai`: what Modelplane cannot learn from the cluster itself.

    `queues_with_quota` is None when the platform declared nothing; then only
    KAI's own `default-queue`, which has no quota on a fresh install, is known to
    lack one.
    """

    queue_label_key: str = pv.KAI_QUEUE_LABEL
    queues_with_quota: frozenset[str] | None = None
    preemptible_priorities: frozenset[str] = frozenset()
    pod_grouper: str = "Automatic"


@dataclass(frozen=True)
class KueueSettings:
    """`spec.scheduling.kueue`: which priorities are also WorkloadPriorityClasses."""

    workload_priority_classes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class VolcanoSettings:
    """`spec.scheduling.volcano`: whether the cluster's LWS controller creates
    Volcano PodGroups (`gangSchedulingManagement.schedulerProvider: volcano`)."""

    lws_gang_scheduling: bool = True


@dataclass(frozen=True)
class SchedulingConfig:
    """A validated scheduling block. Invalid entries are left out and recorded as
    `errors`, which `apply_conventions` reports again so that no workload is
    rendered under a half-understood block."""

    provider: pv.Provider = "Default"
    scheduler_name: str | None = None
    queue: Template | None = None
    default_priority: str | None = None
    allowed_priorities: tuple[str, ...] = ()
    gang_enabled: bool = True
    default_labels: tuple[tuple[str, Template], ...] = ()
    default_annotations: tuple[tuple[str, Template], ...] = ()
    kai: KAISettings = field(default_factory=KAISettings)
    kueue: KueueSettings = field(default_factory=KueueSettings)
    volcano: VolcanoSettings = field(default_factory=VolcanoSettings)
    errors: tuple[Issue, ...] = ()

    def queue_object_labels(self) -> tuple[str, ...]:
        """Label keys the queue preset puts on workload objects."""
        if self.queue is None:
            return ()
        if self.provider == pv.KAI:
            return (self.kai.queue_label_key,)
        if self.provider == pv.KUEUE:
            return (pv.KUEUE_QUEUE_LABEL,)
        return ()

    def preset_labels(self) -> frozenset[str]:
        """Every label key a provider preset sets, on objects or pods."""
        keys = set(self.queue_object_labels())
        if self.provider == pv.KUEUE and self.kueue.workload_priority_classes:
            keys.add(pv.KUEUE_PRIORITY_LABEL)
        return frozenset(keys)

    def preset_annotations(self) -> frozenset[str]:
        """Every annotation key a provider preset sets, on objects or pods."""
        if self.provider == pv.VOLCANO and self.queue is not None:
            return frozenset({pv.VOLCANO_QUEUE_ANNOTATION})
        return frozenset()


def queue_error(provider: str, value: str) -> str | None:
    """Why a rendered queue name cannot be handed to `provider`, or None."""
    if not value.strip():
        return "the queue renders empty"
    if provider == pv.VOLCANO:
        if not is_dns_subdomain(value):
            return f"queue {value!r} must be a DNS subdomain of at most 253 characters"
        return None
    problem = value_error(value)
    if problem is None and not is_dns_subdomain(value):
        problem = "must be a lowercase DNS subdomain naming the queue object"
    return f"queue {value!r} is not a valid label value: {problem}" if problem else None


def priority_error(name: str) -> str | None:
    """Why `name` may not be a model pod's priorityClassName, or None."""
    if not is_dns_subdomain(name):
        return f"priority {name!r} is not a valid PriorityClass name"
    if name.startswith("system-"):
        return f"priority {name!r} is a system PriorityClass, never used for model pods"
    return None
