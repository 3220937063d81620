"""Preemption: a deployment that cannot be placed otherwise displaces serving replicas.

A cluster's platform team opts in with `spec.scheduling.preemption: LowerPriority`
(default Never). There, and only when neither free room nor the room held by
replicas that are not serving yet (`fill`'s displacing pass) fits a new
replica, it may take capacity held by *serving* replicas of other deployments
whose PriorityClass value is strictly lower than its own. Never one of equal
or higher priority, and never when its own class's `preemptionPolicy` is
Never (`Priorities.never_preempt`).

- **Victims.** On each cluster that allows it, the replica takes the pools best
  fit chooses with those replicas' capacity freed; the victims are then the
  replicas that no longer fit behind it in precedence order (`precedence`:
  higher priority, then older, keep their place), so the lowest priority go
  first. Among clusters, the one with the fewest victims wins, then the lowest
  highest victim priority, then spread constraints, best fit, load and name.
- **Order of removal.** The preemptor's decision only places its replica (a
  Warning `Preempting` names the victims, and `status.preemptions` lists them);
  it removes nothing of another deployment's. Each victim's own deployment,
  once it reads the preemptor's ModelReplica (so once it is composed, and the
  cluster's scheduler sees both workloads and preempts by pod priority as it
  would), finds its replica no longer fits behind a replica that preempts it
  (`CapacityBook.yields`): the replica is removed (a Warning `Preempted` and
  `status.preemptions` name the preemptor; the trace says `Preempted`), and a
  replacement is placed elsewhere where room exists, else the deployment waits
  with `ReplicasScheduled` reason `Preempted`.
- **Bounded.** A replica preempts only replicas of strictly lower priority, so
  along any chain of preemptions priority strictly falls: two deployments can
  never preempt each other back and forth, and racing deployments of equal
  priority never preempt at all. Beyond `book.ADMISSION_LIMIT` holders on a
  cluster nobody is preempted there (the admission could not be computed).
- **Order of precedence on such a cluster.** A replica whose class may preempt
  is ordered by priority before whether the others serve (`Standing.preempts`);
  one whose class may not comes after every serving replica, as anywhere else.
"""

from collections.abc import Sequence

from modelplane.scheduling.choice import Rank
from modelplane.scheduling.precedence import Standing
from modelplane.scheduling.spread import Strain


def victim_order(
    victims: Sequence[Standing], strain: Strain, rank: Rank, hosted: int, cluster: str
) -> tuple[int, int, Strain, Rank, int, str]:
    """The key a cluster is chosen by when a replica preempts: fewest victims, then
    the lowest highest victim priority, then spread, best fit, load and name."""
    highest = max((v.priority for v in victims), default=-(2**31))
    return (len(victims), highest, strain, rank, hosted, cluster)


def preempting_why(victims: Sequence[Standing], viewer: str) -> str:
    """A preempting replica's why-here."""
    if not victims:
        return "it preempts nobody: the room its placement needed was freed meanwhile"
    named = ", ".join(v.describe(viewer) for v in victims[:3])
    more = f" and {len(victims) - 3} more" if len(victims) > 3 else ""
    return (
        f"no room otherwise, so it preempts {named}{more}, serving at lower priority, "
        "on a cluster that allows preemption"
    )
