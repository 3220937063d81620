"""The match trace as status: grouped, capped, and summed up per reason.

A fleet of thousands of alike clusters rejects a deployment for the same few
causes thousands of times. Written out one entry per cluster and pool, the trace
would grow with the fleet (about 420 bytes an entry, two per cluster: past
etcd's object limit near 3,700 clusters) and bury the few causes that matter.
So, in status:

- **Grouped.** Entries that say the same thing (same pool, role, reason and
  message) about several clusters are one entry, naming the first of them in
  `cluster`, counting them in `clusters` and listing them, sorted, in
  `clusterNames`: at most `TRACE_NAMES` of them, so that one entry standing for
  10,000 clusters is still a few hundred bytes. The count says how many the list
  leaves out; `modelplane render --trace` asks for every entry and every name.
- **Capped.** At most `TRACE_LIMIT` entries are kept: the largest groups, in
  trace order (cluster, pool, role). What is left out is counted in
  `Omitted`: entries, the rejections they stand for, and those per reason.
- **Summed up.** `histogram` counts the clusters turned down as a whole per
  reason, the way kube-scheduler sums up nodes ("0/1000 clusters available:
  640 SelectorMismatch, 360 InsufficientCapacity"), for the ReplicasScheduled
  message. A cluster with no matching pool counts under the reasons its pools
  failed for, since those are the cause.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modelplane_models.model_deployment import MatchTraceEntry, MatchTraceOmitted

from modelplane.scheduling.rejections import Rejection

if TYPE_CHECKING:  # decision builds its status from here
    from modelplane.scheduling.decision import ClusterTrace

TRACE_LIMIT = 50
"""Entries kept in `status.matchTrace`: about 20 KB of status, whatever the fleet size."""

TRACE_NAMES = 10
"""Cluster names an entry lists in `clusterNames`: 50 entries of 10 names of at most
253 characters stay under 130 KB; typical names make it a few KB."""


@dataclass(frozen=True, slots=True)
class StatusTrace:
    """`status.matchTrace` and, when the cap applied, what it left out
    (`status.matchTraceOmitted`), as the ModelDeployment's status models hold them."""

    entries: list[MatchTraceEntry]
    omitted: MatchTraceOmitted | None


def status_trace(
    trace: Sequence["ClusterTrace"],
    limit: int | None = TRACE_LIMIT,
    names: int | None = TRACE_NAMES,
) -> StatusTrace:
    """The trace grouped by what each entry says, then capped at `limit` entries.

    A grouped entry lists at most `names` of its clusters. None lifts either cap:
    for `modelplane render --trace`, which is not bound by etcd's object limit.
    """
    # (pool, role, reason, message) -> the clusters it is said of, in trace order.
    groups: dict[tuple[str | None, str | None, str, str], list[str]] = {}
    for cluster in trace:
        for row in cluster.rows():
            said = groups.get(row)
            if said is None:
                groups[row] = [cluster.cluster]
            else:
                said.append(cluster.cluster)
    ordered = list(groups.items())
    omitted: MatchTraceOmitted | None = None
    if limit is not None and len(ordered) > limit:
        # The largest groups, the first of equal ones; then back in trace order.
        by_size = sorted(range(len(ordered)), key=lambda i: (-len(ordered[i][1]), i))
        kept, left = sorted(by_size[:limit]), by_size[limit:]
        reasons: Counter[str] = Counter()
        for i in left:
            (_, _, reason, _), clusters = ordered[i]
            reasons[reason] += len(clusters)
        omitted = MatchTraceOmitted(
            entries=len(left),
            rejections=sum(reasons.values()),
            reasons=dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0]))),
        )
        ordered = [ordered[i] for i in kept]
    entries: list[MatchTraceEntry] = []
    for (pool, role, reason, message), clusters in ordered:
        grouped = len(clusters) > 1
        listed = sorted(clusters)[:names] if grouped else None
        entries.append(
            MatchTraceEntry(
                cluster=clusters[0],
                clusters=len(clusters) if grouped else None,
                clusterNames=listed,
                pool=pool,
                role=role,
                reason=reason,
                message=message,
            )
        )
    return StatusTrace(entries, omitted)


def histogram(trace: Sequence["ClusterTrace"]) -> list[tuple[str, int]]:
    """Clusters turned down as a whole, per reason: most first, then by reason.

    A cluster counts once under its own reason, except a cluster where no pool
    matches, which counts once under each reason its pools were rejected for. A
    cluster only some of whose pools were rejected is not turned down.
    """
    counts: Counter[str] = Counter()
    for cluster in trace:
        if cluster.reason is None or cluster.reason is Rejection.MODEL_CACHE_NOT_READY:
            continue
        if cluster.reason is Rejection.NO_MATCHING_POOL and cluster.pools:
            counts.update({pool.reason.value for pool in cluster.pools})
        else:
            counts[cluster.reason.value] += 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def availability(trace: Sequence["ClusterTrace"], clusters: int) -> str:
    """'N/M clusters available: 640 SelectorMismatch, ...', kube-scheduler style."""
    rejected = sum(
        1
        for cluster in trace
        if cluster.reason is not None and cluster.reason is not Rejection.MODEL_CACHE_NOT_READY
    )
    counts = ", ".join(f"{count} {reason}" for reason, count in histogram(trace))
    summary = f"{clusters - rejected}/{clusters} clusters available"
    return f"{summary}: {counts}" if counts else summary
