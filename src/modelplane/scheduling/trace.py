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
from typing import TYPE_CHECKING, Any

from modelplane.scheduling.rejections import Rejection

if TYPE_CHECKING:  # decision builds its status from here
    from modelplane.scheduling.decision import ClusterTrace

TRACE_LIMIT = 50
"""Entries kept in `status.matchTrace`: about 20 KB of status, whatever the fleet size."""

TRACE_NAMES = 10
"""Cluster names an entry lists in `clusterNames`: 50 entries of 10 names of at most
253 characters stay under 130 KB; typical names make it a few KB."""


@dataclass(frozen=True, slots=True)
class Omitted:
    """What the cap left out of the status trace."""

    entries: int
    rejections: int
    reasons: tuple[tuple[str, int], ...]

    def as_status(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "rejections": self.rejections,
            "reasons": dict(self.reasons),
        }


@dataclass(frozen=True, slots=True)
class StatusTrace:
    """`status.matchTrace` and, when the cap applied, what it left out."""

    entries: list[dict[str, Any]]
    omitted: Omitted | None


def status_trace(
    trace: Sequence["ClusterTrace"],
    limit: int | None = TRACE_LIMIT,
    names: int | None = TRACE_NAMES,
) -> StatusTrace:
    """The trace grouped by what each entry says, then capped at `limit` entries.

    A grouped entry lists at most `names` of its clusters. None lifts either cap:
    for `modelplane render --trace`, which is not bound by etcd's object limit.
    """
    groups: dict[tuple[str, ...], list[Any]] = {}
    for cluster in trace:
        for entry in cluster.as_status():
            key = (entry.get("pool", ""), entry.get("role", ""), entry["reason"], entry["message"])
            group = groups.get(key)
            if group is None:
                # [first entry, clusters it stands for, its place in trace order, their names]
                groups[key] = [entry, 1, len(groups), [entry["cluster"]]]
            else:
                group[1] += 1
                group[3].append(entry["cluster"])
    ordered = list(groups.values())
    omitted: Omitted | None = None
    if limit is not None and len(ordered) > limit:
        by_size = sorted(ordered, key=lambda group: (-group[1], group[2]))
        kept, left = by_size[:limit], by_size[limit:]
        reasons: Counter[str] = Counter()
        for entry, count, *_ in left:
            reasons[entry["reason"]] += count
        omitted = Omitted(
            len(left),
            sum(reasons.values()),
            tuple(sorted(reasons.items(), key=lambda item: (-item[1], item[0]))),
        )
        ordered = sorted(kept, key=lambda group: group[2])
    entries: list[dict[str, Any]] = []
    for entry, count, _, clusters in ordered:
        if count == 1:
            entries.append(entry)
        else:
            listed = sorted(clusters)[:names] if names is not None else sorted(clusters)
            entries.append(
                {"cluster": entry["cluster"], "clusters": count, "clusterNames": listed, **entry}
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
