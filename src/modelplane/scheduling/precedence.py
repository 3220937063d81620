"""Precedence: which replica keeps capacity that several replicas claim, and which yields.

One rule orders every replica that holds, or would take, devices on a pool:

1. a serving replica (its ModelReplica's `Serving` condition is True) before one
   that is not: the fleet scheduler does not displace running work, except on a
   cluster whose `scheduling.preemption` is LowerPriority, where a replica whose
   class may preempt (`Standing.preempts`) comes before serving replicas of lower
   priority (`preemption`);
2. then the higher PriorityClass value (`Priorities.value` of the priority the
   replica resolves to on its cluster);
3. then the older (`metadata.creationTimestamp`). A replica this decision is
   about to create is the newest of all. One whose creation time is not
   recorded (the render engine sets none) comes after every replica that has
   one, and such replicas are ordered by namespace, then name: deterministic,
   though not their age;
4. then namespace and name, so no two replicas tie.

Where a pool holds more than it can (replicas of two deployments placed at once,
a pool that shrank, or a higher-priority replica placed on capacity that
lower-priority replicas hold), replicas are admitted in this order while they
fit; a replica that does not fit and is not serving *yields*. A decision only
ever changes its own deployment's replicas, so each deployment's yielding
replicas leave in its own reconcile, and every deployment, reading the same
fleet, reaches the same verdict. A new replica may take capacity from a replica
only when it precedes that replica: since a new replica is the newest and not
serving, that means a strictly higher priority, and the replica it takes from
is not serving.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Standing:
    """What precedence reads of one replica, and who it is for messages."""

    namespace: str
    name: str
    owner: str | None
    serving: bool
    priority: int
    priority_name: str | None
    created: str | None = None
    new: bool = False
    """Not created yet: this decision would create it."""
    preempts: bool = False
    """On its cluster it may displace serving replicas of lower priority (the cluster's
    `scheduling.preemption` is LowerPriority and its class's `preemptionPolicy` is not
    Never): its priority then counts before whether the others serve."""

    def key(self) -> tuple[bool, int, bool, int, str, str, str]:
        """Sorts replicas that take precedence first."""
        age = 2 if self.new else (1 if self.created is None else 0)
        return (
            not self.serving and not self.preempts,
            -self.priority,
            not self.serving,
            age,
            self.created or "",
            self.namespace,
            self.name,
        )

    def describe(self, viewer: str) -> str:
        """This replica as a decision for a deployment in namespace `viewer` may name it:
        another namespace's deployments and replicas are another tenant's business."""
        if self.namespace != viewer:
            return "a replica in another namespace"
        if self.new:
            return "a new replica" + (f" of ModelDeployment {self.owner}" if self.owner else "")
        owner = f" of ModelDeployment {self.owner}" if self.owner else ""
        return f"replica {self.name}{owner}"


def precedes(first: Standing, second: Standing) -> bool:
    """Whether `first` keeps contended capacity before `second`."""
    return first.key() < second.key()


def may_displace(newcomer: Standing, holder: Standing) -> bool:
    """Whether `newcomer` may take capacity `holder` holds: it precedes it, and `holder`
    is not serving."""
    return not holder.serving and precedes(newcomer, holder)


def may_preempt(newcomer: Standing, holder: Standing) -> bool:
    """Whether `newcomer` may displace `holder` although it serves: it preempts on the
    cluster and its priority is strictly higher (`preemption`)."""
    return newcomer.preempts and holder.priority < newcomer.priority


def _priority(standing: Standing) -> str:
    name = standing.priority_name or "none"
    return f"{name} {standing.priority}"


def because(first: Standing, second: Standing) -> str:
    """Why `first` precedes `second`, in words: the first rule that tells them apart."""
    if first.preempts and first.priority > second.priority:
        return (
            f"it has higher priority ({_priority(first)} > {_priority(second)}) on a cluster "
            "that lets it preempt"
        )
    if first.serving != second.serving:
        return "it is serving and this replica is not"
    if first.priority != second.priority:
        return f"it has higher priority ({_priority(first)} > {_priority(second)})"
    if first.created is not None and second.created is not None and first.created != second.created:
        return f"it is older (created {first.created}, this replica {second.created})"
    if second.new:
        return "it already exists and has the same priority"
    if first.created is not None and second.created is None:
        return "it records a creation time and this replica does not"
    return "neither records when it was created, so namespace and name decide"
