"""What one scheduling decision produces: replicas, removals, trace, condition, events."""

from dataclasses import dataclass
from enum import StrEnum

from modelplane_models.model_deployment import MatchTraceEntry, PreemptionStatus

from modelplane.core.condition import Condition
from modelplane.core.placement import PlacedRole
from modelplane.core.vocabulary import (
    LABEL_CLUSTER,
    LABEL_DEPLOYMENT,
    LABEL_REPLICA_INDEX,
)
from modelplane.scheduling.rejections import Rejection
from modelplane.scheduling.trace import StatusTrace, status_trace


class Origin(StrEnum):
    """Why a desired replica is where it is."""

    RETAINED = "Retained"
    """An existing replica kept on its (cluster, index), re-derived from the current spec."""
    PLACED = "Placed"
    """A new replica placed by this decision."""
    PENDING = "Pending"
    """An existing replica kept exactly as it runs while a rollout reaches it: it
    records an older revision of the deployment, or must move (`moves`)."""
    HELD = "Held"
    """An existing replica kept exactly as recorded, because the spec could not be
    evaluated (a selector that does not compile, or an edit that matches nothing)."""


@dataclass(frozen=True, slots=True)
class DesiredReplica:
    name: str
    cluster: str
    index: int
    roles: tuple[PlacedRole, ...]
    origin: Origin
    why: str | None = None
    """Why a new replica went to this pool: set where the scheduler had a choice to make
    (pools of different capability), or took capacity from others."""
    preempts: tuple[str, ...] = ()
    """The serving replicas a new replica preempts (`preemption`), as the deployment's
    namespace may name them."""
    backend: str = ""
    """The backend it renders with (`modelplane.ai/backend`): its cluster's, placed or
    kept current; a replica held as recorded keeps what it records ("" for none)."""

    @property
    def retained(self) -> bool:
        return self.origin is not Origin.PLACED

    def placement_labels(self, deployment: str) -> dict[str, str]:
        """The labels that say, for people and selectors (the scale subresource's),
        whose replica this is and where it runs. Nothing reads them back: the spec
        and Crossplane's ownership records are the identity."""
        return {
            LABEL_DEPLOYMENT: deployment,
            LABEL_CLUSTER: self.cluster,
            LABEL_REPLICA_INDEX: str(self.index),
        }

    def as_status(self) -> dict[str, object]:
        """The replica's entry in the deployment's status: name, cluster, pool per role."""
        return {
            "name": self.name,
            "cluster": self.cluster,
            "index": self.index,
            "pools": {role.role: role.pool for role in self.roles},
        }

    @property
    def new(self) -> bool:
        return self.origin is Origin.PLACED


@dataclass(frozen=True, slots=True)
class RemovedReplica:
    """An existing replica of this deployment that the decision drops, and why."""

    name: str
    cluster: str | None
    index: int | None
    reason: str
    preempted_by: str | None = None
    """The replica that preempted it (`preemption`), as its namespace may name it."""


@dataclass(frozen=True, slots=True)
class PoolTrace:
    """Why a pool was rejected; `role` names the role it failed, None for a unified deployment."""

    pool: str
    reason: Rejection
    message: str
    role: str | None = None
    # Set when the role's selectors failed with an error on every device of the pool
    # (`matching.Mismatch.selector_error`).
    selector_error: str | None = None

    def label(self) -> str:
        return f"pool {self.pool}" if self.role is None else f"pool {self.pool} ({self.role})"

    def order(self) -> tuple[str, str]:
        """The sort key of a cluster's pool entries: pool, then role."""
        return self.pool, self.role or ""


@dataclass(frozen=True, slots=True)
class ClusterTrace:
    """Why a cluster, or some of its pools, were rejected.

    `reason` and `message` are set when the whole cluster was rejected; `pools`
    lists rejected pools of a cluster that was otherwise considered, sorted by
    pool, then role.
    """

    cluster: str
    reason: Rejection | None
    message: str | None
    pools: tuple[PoolTrace, ...] = ()

    def __post_init__(self) -> None:
        if (self.reason is None) != (self.message is None):
            raise ValueError("a cluster rejection needs both a reason and a message")

    def lines(self) -> list[str]:
        lines = [f"cluster {self.cluster}: {self.message}"] if self.message is not None else []
        lines.extend(f"cluster {self.cluster} {p.label()}: {p.message}" for p in self.pools)
        return lines

    def rows(self) -> list[tuple[str | None, str | None, str, str]]:
        """(pool, role, reason, message) of each of its `status.matchTrace` entries: the
        cluster's own first, then its pools; pool and role are None where they do not
        apply. `trace.status_trace` makes them entries, grouped across clusters."""
        rows: list[tuple[str | None, str | None, str, str]] = []
        if self.reason is not None and self.message is not None:
            rows.append((None, None, self.reason.value, self.message))
        rows.extend((p.pool, p.role, p.reason.value, p.message) for p in self.pools)
        return rows


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class Event:
    type: EventType
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Decision:
    """The scheduler's answer for one ModelDeployment.

    `replicas` is the complete desired set, sorted by (cluster, index): the glue
    composes exactly these ModelReplicas and nothing else. `removed` lists
    existing replicas left out, sorted by name; a removed replica whose name
    reappears in `replicas` was re-placed on the same (cluster, index) and is
    updated in place. `trace` lists every rejected cluster and pool, sorted by
    cluster name; `status_trace()` is what status says of it, grouped and capped
    (see `modelplane.scheduling.trace`).
    """

    replicas: tuple[DesiredReplica, ...]
    removed: tuple[RemovedReplica, ...]
    trace: tuple[ClusterTrace, ...]
    condition: Condition
    """The `ReplicasScheduled` condition."""
    events: tuple[Event, ...]
    updated: int = 0
    """Replicas that run the deployment's current revision and placement."""
    progress: Condition | None = None
    """The `Progressing` condition: how far the rollout of the current revision got."""
    sought_room: bool = False
    """Whether the decision looked for room for a replica (to place, surge or move one):
    what it found depends on every cluster it could use, not only those it runs on."""

    @property
    def placed(self) -> int:
        return len(self.replicas)

    def trace_lines(self, limit: int | None = None) -> list[str]:
        """The trace as readable lines; with a limit, the rest is summarised in one line."""
        lines = [line for entry in self.trace for line in entry.lines()]
        if limit is not None and len(lines) > limit:
            rest = len(lines) - limit
            return [*lines[:limit], f"... and {rest} more rejection{'s' if rest != 1 else ''}"]
        return lines

    def status_trace(self, *, complete: bool = False) -> StatusTrace:
        """The trace as status: `status.matchTrace`, grouped and capped, and what the cap
        left out; `complete` lifts the caps, keeping every entry and every cluster name."""
        if complete:
            return status_trace(self.trace, limit=None, names=None)
        return status_trace(self.trace)

    def preemptions(self) -> list[PreemptionStatus]:
        """`status.preemptions`: the replicas this decision's new ones preempt, and the
        replicas of this deployment preempted, with who preempted them."""
        entries = [
            PreemptionStatus(replica=r.name, cluster=r.cluster, preempts=list(r.preempts))
            for r in self.replicas
            if r.preempts
        ]
        entries.extend(
            PreemptionStatus(replica=r.name, cluster=r.cluster or "", preemptedBy=r.preempted_by)
            for r in self.removed
            if r.preempted_by is not None
        )
        return entries

    def match_trace(self) -> list[MatchTraceEntry]:
        """`status.matchTrace`: ordered by (first) cluster, then pool, then role."""
        return self.status_trace().entries
