"""The validated form of `InferenceCluster.spec.scheduling`: every fact read from the
block, for both the side that composes a replica's workloads and the fleet scheduler
(`modelplane.scheduling.adapt`), so the two can never read it differently."""

from dataclasses import dataclass, field

from modelplane.conventions.schedulers import Default, Scheduler
from modelplane.conventions.template import Template
from modelplane.core.issues import Issue
from modelplane.core.naming import is_dns_subdomain


@dataclass(frozen=True)
class SchedulingConfig:
    """A validated scheduling block. Invalid entries are left out and recorded as
    `errors`, which `apply_conventions` reports again so that no workload is
    rendered under a half-understood block. `scheduler` is the chosen provider,
    with its own settings."""

    scheduler: Scheduler = field(default_factory=Default)
    scheduler_name: str | None = None
    queue: Template | None = None
    default_priority: str | None = None
    """None when the block names none, or names one it may not (`refused_default`)."""
    refused_default: Issue | None = None
    """Why the block's `defaultPriority` is refused (also among `errors`): a replica
    that would take its priority from it is neither rendered nor placed here."""
    allowed_priorities: tuple[str, ...] = ()
    over_quota_priorities: frozenset[str] = frozenset()
    """`overQuotaPriorities` and those the chosen scheduler's own settings let borrow
    or preempt beyond a queue's quota."""
    preemption: bool = False
    """`preemption: LowerPriority`."""
    gang_enabled: bool = True
    workload_api: str | None = None
    """The `scheduling.k8s.io` Workload version gangs are composed in (gang.api:
    Workload on a cluster whose Kubernetes version serves one), else None."""
    default_labels: tuple[tuple[str, Template], ...] = ()
    default_annotations: tuple[tuple[str, Template], ...] = ()
    errors: tuple[Issue, ...] = ()

    def preset_labels(self) -> frozenset[str]:
        """Every label key the provider sets, on objects or pods."""
        return self.scheduler.preset_labels(self.queue is not None)

    def preset_annotations(self) -> frozenset[str]:
        """Every annotation key the provider sets, on objects or pods."""
        return self.scheduler.preset_annotations(self.queue is not None)


def priority_error(name: str) -> str | None:
    """Why `name` may not be a model pod's priorityClassName, or None."""
    if not is_dns_subdomain(name):
        return f"priority {name!r} is not a valid PriorityClass name"
    if name.startswith("system-"):
        return f"priority {name!r} is a system PriorityClass, never used for model pods"
    return None
