"""What one scheduling decision produces: replicas, removals, trace, condition, events."""

from dataclasses import dataclass
from enum import StrEnum

from modelplane.core.vocabulary import (
    LABEL_CLUSTER,
    LABEL_DEPLOYMENT,
    LABEL_REPLICA_INDEX,
    REPLICAS_SCHEDULED,
)
from modelplane.scheduling.model import ClaimRequest, Topology


class Origin(StrEnum):
    """Why a desired replica is where it is."""

    RETAINED = "Retained"
    """An existing replica kept on its (cluster, index), re-derived from the current spec."""
    PLACED = "Placed"
    """A new replica placed by this decision."""
    HELD = "Held"
    """An existing replica kept exactly as recorded, because the spec could not be
    evaluated (a selector that does not compile, or an edit that matches nothing)."""


@dataclass(frozen=True, slots=True)
class RolePlacement:
    """Where one role of a replica runs and what it claims there."""

    role: str
    pool: str
    workers: int
    topology: Topology
    device_requests: tuple[ClaimRequest, ...]

    def as_dict(self) -> dict[str, object]:
        """The role's scheduler-owned ModelReplica fields (the glue adds the template)."""
        return {
            "count": self.workers,
            "topology": self.topology.as_dict(),
            "nodePoolName": self.pool,
            "deviceRequests": [request.as_dict() for request in self.device_requests],
        }


@dataclass(frozen=True, slots=True)
class DesiredReplica:
    name: str
    cluster: str
    index: int
    roles: tuple[RolePlacement, ...]
    origin: Origin

    @property
    def retained(self) -> bool:
        return self.origin is not Origin.PLACED

    def identity_labels(self, deployment: str) -> dict[str, str]:
        """The labels that carry this replica's identity; the parser reads them back."""
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


@dataclass(frozen=True, slots=True)
class PoolTrace:
    pool: str
    reason: str


@dataclass(frozen=True, slots=True)
class ClusterTrace:
    """Why a cluster, or some of its pools, were rejected.

    `reason` is set when the whole cluster was rejected; `pools` lists rejected
    pools of a cluster that was otherwise considered.
    """

    cluster: str
    reason: str | None
    pools: tuple[PoolTrace, ...] = ()

    def lines(self) -> list[str]:
        lines = [f"cluster {self.cluster}: {self.reason}"] if self.reason else []
        lines.extend(f"cluster {self.cluster} pool {p.pool}: {p.reason}" for p in self.pools)
        return lines


@dataclass(frozen=True, slots=True)
class Condition:
    """The ReplicasScheduled condition the glue sets on the ModelDeployment."""

    status: bool
    reason: str
    message: str
    type: str = REPLICAS_SCHEDULED


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
    cluster name.
    """

    replicas: tuple[DesiredReplica, ...]
    removed: tuple[RemovedReplica, ...]
    trace: tuple[ClusterTrace, ...]
    condition: Condition
    events: tuple[Event, ...]

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
