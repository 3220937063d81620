"""The match trace in status stays useful and bounded at any fleet size: identical
rejections are grouped, entries are capped with counts of what was left out, and a
False ReplicasScheduled sums clusters up per reason, as kube-scheduler sums up nodes."""

from modelplane_models.model_deployment import MatchTraceEntry, MatchTraceOmitted, Status

from modelplane.scheduling import ClusterTrace, PoolTrace, Rejection
from modelplane.scheduling.trace import (
    TRACE_LIMIT,
    TRACE_NAMES,
    availability,
    histogram,
    status_trace,
)

from .builders import cluster, deployment, gpu, h100, l4, nic, pool, request, run

ADA = request("gpu", 1, "arch == Ada")


def test_a_gpu_selector_is_not_reported_failing_on_the_nics_of_a_node() -> None:
    dep = deployment(1, request("gpu", 1, "arch == Blackwell"))
    decision = run(dep, [cluster("a", pool("h100", 2, gpu(8, "Hopper", 80), nic()))])
    (_, entry) = decision.match_trace()
    assert entry.reason == Rejection.SELECTOR_MISMATCH
    assert entry.message == ("request 'gpu' (count 1): gpu: selector 'arch == Blackwell' is false")


def test_a_selector_no_device_can_be_read_against_names_every_kind() -> None:
    """Where the selector errs on every kind, the errors are what the user must see."""
    dep = deployment(1, request("ib", 1, "fabric == infiniband"))
    decision = run(dep, [cluster("a", pool("h100", 2, gpu(8, "Hopper", 80), nic()))])
    (_, entry) = decision.match_trace()
    assert "gpu: selector 'fabric == infiniband' failed" in (entry.message or "")
    assert "nic: selector 'fabric == infiniband' failed" in (entry.message or "")


def test_alike_clusters_are_one_entry_each_cause() -> None:
    clusters = [cluster(f"c{i:02d}", h100(), l4()) for i in range(12)]
    decision = run(deployment(60, ADA), clusters)
    trace = decision.match_trace()
    # h100 never matches Ada; every l4 fills up: one entry per cause, not per cluster.
    assert [(e.cluster, e.pool, e.reason, e.clusters) for e in trace] == [
        ("c00", None, Rejection.INSUFFICIENT_CAPACITY, 12),
        ("c00", "h100", Rejection.SELECTOR_MISMATCH, 12),
        ("c00", "l4", Rejection.INSUFFICIENT_CAPACITY, 12),
    ]
    assert decision.status_trace().omitted is None
    assert decision.condition.message == (
        "48 of 60 replicas scheduled: no room for more on the 12 eligible clusters; "
        "0/12 clusters available: 12 InsufficientCapacity"
    )


def _rejected(name: str, reason: Rejection, message: str, *pools: PoolTrace) -> ClusterTrace:
    return ClusterTrace(name, reason, message, pools)


def test_entries_are_capped_keeping_the_largest_groups_in_trace_order() -> None:
    # Each cluster rejected for its own message, but three share one.
    trace = [_rejected(f"c{i:03d}", Rejection.NO_POOLS, f"own {i}") for i in range(100)]
    trace += [_rejected(f"s{i}", Rejection.PRIORITY_NOT_ALLOWED, "shared") for i in range(3)]
    bounded = status_trace(trace, limit=10)
    assert len(bounded.entries) == 10
    # The shared group is the largest; the rest are kept in trace order.
    assert bounded.entries[-1] == MatchTraceEntry(
        cluster="s0",
        clusters=3,
        clusterNames=["s0", "s1", "s2"],
        reason="PriorityNotAllowed",
        message="shared",
    )
    assert [e.cluster for e in bounded.entries[:-1]] == [f"c{i:03d}" for i in range(9)]
    assert bounded.omitted == MatchTraceOmitted(entries=91, rejections=91, reasons={"NoPools": 91})


def test_ten_thousand_clusters_of_different_messages_stay_bounded() -> None:
    trace = [
        _rejected(
            f"cluster-{i:05d}",
            Rejection.NO_MATCHING_POOL,
            "no pool matches the nodeSelector",
            PoolTrace("l4", Rejection.SELECTOR_MISMATCH, f"a long message {i} " + "x" * 300),
            PoolTrace("h100", Rejection.TOO_FEW_DEVICES, "gpu has only 8 per node"),
        )
        for i in range(10_000)
    ]
    bounded = status_trace(trace)
    assert len(bounded.entries) == TRACE_LIMIT
    assert bounded.omitted is not None
    status = Status(matchTrace=bounded.entries, matchTraceOmitted=bounded.omitted)
    assert len(status.model_dump_json(exclude_none=True)) < 256 * 1024
    assert (bounded.omitted.rejections or 0) + sum(
        e.clusters or 1 for e in bounded.entries
    ) == 30_000


def test_every_cluster_of_a_small_grouped_entry_is_named() -> None:
    """The problem: an entry for two clusters named only the first; the second could
    not be found from status at all."""
    full = "not enough free capacity for a replica"
    trace = [
        _rejected("east", Rejection.INSUFFICIENT_CAPACITY, full),
        _rejected("north", Rejection.NO_POOLS, "no pools"),
        _rejected("west", Rejection.INSUFFICIENT_CAPACITY, full),
    ]
    (grouped, _) = status_trace(trace).entries
    assert grouped == MatchTraceEntry(
        cluster="east",
        clusters=2,
        clusterNames=["east", "west"],
        reason="InsufficientCapacity",
        message=full,
    )


def test_a_large_grouped_entry_names_its_first_clusters_and_counts_the_rest() -> None:
    trace = [_rejected(f"c{i:05d}", Rejection.NO_POOLS, "no pools") for i in range(10_000)]
    (entry,) = status_trace(trace).entries
    assert entry.clusters == 10_000
    assert entry.clusterNames == [f"c{i:05d}" for i in range(TRACE_NAMES)]
    assert len(entry.model_dump_json(exclude_none=True)) < 300


def test_the_whole_trace_keeps_every_entry_and_every_cluster() -> None:
    """What `modelplane render --trace` asks for: nothing capped, nothing unnamed."""
    trace = [_rejected(f"c{i:03d}", Rejection.NO_POOLS, f"own {i}") for i in range(100)]
    trace += [_rejected(f"s{i:02d}", Rejection.PRIORITY_NOT_ALLOWED, "x") for i in range(30)]
    whole = status_trace(trace, limit=None, names=None)
    assert whole.omitted is None
    named = [n for e in whole.entries for n in e.clusterNames or [e.cluster]]
    assert named == [c.cluster for c in trace]


def test_the_histogram_counts_each_turned_down_cluster_under_its_causes() -> None:
    mismatch = PoolTrace("l4", Rejection.SELECTOR_MISMATCH, "false")
    trace = [
        *(_rejected(f"m{i}", Rejection.NO_MATCHING_POOL, "no pool", mismatch) for i in range(640)),
        *(_rejected(f"f{i}", Rejection.INSUFFICIENT_CAPACITY, "full") for i in range(360)),
        # Only a pool rejected: the cluster itself is still available.
        ClusterTrace("ok", None, None, (mismatch,)),
    ]
    assert histogram(trace) == [("SelectorMismatch", 640), ("InsufficientCapacity", 360)]
    assert availability(trace, 1001) == (
        "1/1001 clusters available: 640 SelectorMismatch, 360 InsufficientCapacity"
    )
