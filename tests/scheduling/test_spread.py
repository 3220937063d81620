"""Spread constraints: Pod topology spread semantics over InferenceCluster labels."""

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.scheduling import Rejection

from .builders import (
    Obj,
    cluster,
    deployment,
    gpu,
    h100,
    l4,
    new_placements,
    placements,
    pool,
    read_dep,
    replica,
    run,
)
from .test_queues import queue

DRAIN_TAINT = {"key": "example.com/drain", "value": "now", "effect": "NoExecute"}
PER_CLUSTER = {
    "topologyKey": "modelplane.ai/cluster",
    "maxSkew": 1,
    "whenUnsatisfiable": "DoNotSchedule",
}
PER_REGION = {"topologyKey": "region", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}
PREFER_REGIONS = {"topologyKey": "region", "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}


def _region(name: str, region: str, nodes: int = 4) -> Obj:
    return cluster(name, h100(nodes), labels={"region": region})


def _big(name: str, labels: dict[str, str] | None = None) -> Obj:
    """A cluster whose nodes best fit passes over for an 8-GPU replica while others have room."""
    return cluster(name, pool("big", 4, gpu(16)), labels=labels or {})


def _hosted(placed: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in placed:
        name = entry.split("/")[0]
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_without_constraints_best_fit_packs_replicas_onto_one_cluster() -> None:
    # The baseline the constraint changes: equally capable clusters, spread by load.
    fleet = [cluster("a", h100(4)), cluster("b", h100(4)), cluster("c", l4())]
    decision = run(deployment(4), fleet)
    assert _hosted(placements(decision)) == {"a": 2, "b": 2}


def test_one_replica_per_cluster_under_the_implicit_cluster_label() -> None:
    fleet = [cluster("a", h100(4)), cluster("b", h100(4)), cluster("c", h100(4))]
    decision = run(deployment(3, spread=[PER_CLUSTER]), fleet)
    assert _hosted(placements(decision)) == {"a": 1, "b": 1, "c": 1}
    for placed in decision.replicas:
        assert placed.why is not None and "modelplane.ai/cluster=" in placed.why


def test_do_not_schedule_leaves_a_replica_unplaced_rather_than_exceed_max_skew() -> None:
    # Region eu has room for one replica only; maxSkew 1 lets us hold one more than eu.
    fleet = [_region("us-1", "us"), _region("eu-1", "eu", nodes=1)]
    decision = run(deployment(4, spread=[PER_REGION]), fleet)

    assert _hosted(placements(decision)) == {"us-1": 2, "eu-1": 1}
    trace = {entry.cluster: entry for entry in decision.match_trace()}
    assert trace["us-1"].reason == Rejection.SPREAD_CONSTRAINT
    assert "region=us" in (trace["us-1"].message or "")
    assert trace["eu-1"].reason == Rejection.INSUFFICIENT_CAPACITY
    assert decision.condition.status is False
    assert (
        "3 of 4 replicas scheduled: no room for more on the 2 eligible clusters within "
        "the spread constraints" in decision.condition.message
    )


def test_a_full_queue_is_a_full_domain_that_still_counts() -> None:
    # eu's in-cluster queue for the namespace is full: as with full nodes, eu stays a
    # domain holding none, so us may hold one replica (the one it has) and no more.
    full_eu = cluster("eu-1", h100(4), labels={"region": "eu"}, queues=[queue(16, 16)])
    running = [replica("us-1", 0, serving=True)]
    decision = run(deployment(3, spread=[PER_REGION]), [_region("us-1", "us"), full_eu], running)

    assert _hosted(placements(decision)) == {"us-1": 1}
    trace = {entry.cluster: entry for entry in decision.match_trace()}
    assert trace["eu-1"].reason == Rejection.QUEUE_FULL
    assert trace["us-1"].reason == Rejection.SPREAD_CONSTRAINT
    # With room in eu's queue, the replicas go there until the regions are even.
    open_eu = cluster("eu-1", h100(4), labels={"region": "eu"}, queues=[queue(64, 0)])
    decision = run(deployment(3, spread=[PER_REGION]), [_region("us-1", "us"), open_eu], running)
    assert _hosted(placements(decision)) == {"us-1": 1, "eu-1": 2}


def test_a_cluster_without_the_key_takes_nothing_under_do_not_schedule() -> None:
    # us is the only domain, so it may hold any number; bare, with room, takes none.
    fleet = [_region("us-1", "us", nodes=1), cluster("bare", h100(4))]
    decision = run(deployment(2, spread=[PER_REGION]), fleet)

    assert _hosted(placements(decision)) == {"us-1": 1}
    trace = {entry.cluster: entry for entry in decision.match_trace()}
    assert trace["bare"].reason == Rejection.SPREAD_CONSTRAINT
    assert "no label region" in (trace["bare"].message or "")


def test_schedule_anyway_prefers_the_emptier_region_but_places_beyond_max_skew() -> None:
    fleet = [_region("us-1", "us"), _region("us-2", "us"), _region("eu-1", "eu", nodes=1)]
    decision = run(deployment(4, spread=[PREFER_REGIONS]), fleet)

    hosted = _hosted(placements(decision))
    assert hosted["eu-1"] == 1  # it got a replica before either us cluster got a second
    assert sum(hosted.values()) == 4
    assert all(r.why is not None and "ScheduleAnyway" in r.why for r in decision.replicas)


def test_scale_up_counts_the_replicas_already_running() -> None:
    fleet = [_region("us-1", "us"), _big("eu-1", {"region": "eu"})]
    running = [replica("us-1", 0, serving=True), replica("us-1", 1, serving=True)]
    unconstrained = run(deployment(4), fleet, running)
    assert new_placements(unconstrained) == ["us-1/2:h100", "us-1/3:h100"]

    decision = run(deployment(4, spread=[PER_REGION]), fleet, running)
    assert new_placements(decision) == ["eu-1/0:big", "eu-1/1:big"]


def test_a_moving_replica_is_not_counted_where_it_leaves() -> None:
    # us-1 is drained: its replica's replacement may take the same region (us-2, best
    # fit), as the region then holds one replica again, not two against eu's none.
    drained = cluster("us-1", h100(4), labels={"region": "us"}, taints=[DRAIN_TAINT])
    fleet = [drained, _region("us-2", "us"), _big("eu-1", {"region": "eu"})]
    running = [replica("us-1", 0, serving=True)]
    decision = run(deployment(1, spread=[PER_REGION]), fleet, running)

    assert new_placements(decision) == ["us-2/0:h100"]


def test_a_rollout_surge_honours_the_constraint() -> None:
    fleet = [cluster("a", h100(4)), cluster("b", h100(4)), _big("c")]
    outdated = {"annotations": {"modelplane.ai/revision": "old"}}
    running = [
        _with(replica("a", 0, serving=True), outdated),
        _with(replica("b", 0, serving=True), outdated),
    ]
    unconstrained = run(deployment(2), fleet, running)
    # Without spread, an image bump surges beside an outdated replica, on its cluster.
    assert [p.split("/")[0] for p in new_placements(unconstrained)] in (["a"], ["b"])

    decision = run(deployment(2, spread=[PER_CLUSTER]), fleet, running)
    # The surge replica goes to the cluster holding none, not beside an old one.
    assert new_placements(decision) == ["c/0:big"]


def _with(obj: Obj, metadata: Obj) -> Obj:
    merged = dict(obj["metadata"])
    merged["annotations"] = {**merged.get("annotations", {}), **metadata["annotations"]}
    return {**obj, "metadata": merged}


def test_ineligible_clusters_are_no_domain() -> None:
    # An L4-only cluster in eu matches no pool: eu is no domain, so us is not held to it.
    fleet = [_region("us-1", "us"), cluster("eu-1", l4(), labels={"region": "eu"})]
    decision = run(deployment(3, spread=[PER_REGION]), fleet)

    assert _hosted(placements(decision)) == {"us-1": 3}


@pytest.mark.parametrize(
    ("constraints", "field"),
    [
        (
            [{"topologyKey": "bad key", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
            "spec.placement.spreadConstraints[0].topologyKey",
        ),
        ([PER_REGION, PER_REGION], "spec.placement.spreadConstraints[1]"),
    ],
)
def test_bad_constraints_name_the_field(constraints: list[Obj], field: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        read_dep(deployment(1, spread=constraints))
    assert [issue.path for issue in raised.value.issues] == [field]


def test_the_same_inputs_give_the_same_decision() -> None:
    fleet = [_region(f"c{i}", "us" if i % 2 else "eu") for i in range(6)]
    first = run(deployment(5, spread=[PER_REGION, PREFER_REGIONS]), fleet)
    again = run(deployment(5, spread=[PER_REGION, PREFER_REGIONS]), list(reversed(fleet)))
    assert first == again


def test_a_scale_down_takes_from_the_domain_holding_most() -> None:
    # One replica per cluster: us holds 2, eu 1. Without spread the scale down takes the
    # later cluster name, z-1, and empties eu: a skew of 2 no scale up would make.
    fleet = [_region("a-1", "us"), _region("a-2", "us"), _region("z-1", "eu")]
    running = [replica(name, 0, serving=True) for name in ("a-1", "a-2", "z-1")]
    plain = run(deployment(2), fleet, running)
    assert sorted(p.split("/")[0] for p in placements(plain)) == ["a-1", "a-2"]

    decision = run(deployment(2, spread=[PER_REGION]), fleet, running)
    assert sorted(p.split("/")[0] for p in placements(decision)) == ["a-1", "z-1"]
    assert [r.reason for r in decision.removed] == ["scaled down to 2 replicas"]


def test_a_scale_down_under_spread_drops_a_replica_not_serving_first() -> None:
    # Both regions hold as much, so spread lets either go: the replica that does not
    # serve yet (a leftover surge) goes, not the serving one the plain order would take.
    fleet = [_region("a-1", "us"), _region("z-1", "eu"), _region("z-2", "eu")]
    running = [
        replica("a-1", 0, serving=True),
        replica("z-1", 0, serving=False),
        replica("z-2", 0, serving=True),
    ]
    loose = {**PER_REGION, "maxSkew": 2}
    decision = run(deployment(2, spread=[loose]), fleet, running)
    assert [r.name for r in decision.removed] == [running[1]["metadata"]["name"]]


def test_the_implicit_cluster_label_is_selectable_too() -> None:
    fleet = [cluster("a", h100(4)), cluster("b", h100(4))]
    selector = {
        "matchExpressions": [{"key": "modelplane.ai/cluster", "operator": "NotIn", "values": ["a"]}]
    }
    decision = run(deployment(1, cluster_selector=selector), fleet)
    assert placements(decision) == ["b/0:h100"]


def test_a_region_kept_out_is_let_back_in_once_the_other_catches_up() -> None:
    # r1's small cluster fills after one replica; r1 and r2 then take turns, each kept
    # out while a replica ahead, until r2's cluster is full and r1 may not run 2 ahead.
    fleet = [_region("a", "r1", nodes=1), _region("b", "r1"), _region("c", "r2")]
    decision = run(deployment(7, spread=[PER_REGION]), fleet)
    assert _hosted(placements(decision)) == {"a": 1, "b": 3, "c": 3}
    short = run(deployment(10, spread=[PER_REGION]), fleet)
    assert _hosted(placements(short)) == {"a": 1, "b": 4, "c": 4}
    trace = {entry.cluster: entry for entry in short.match_trace()}
    assert trace["b"].reason == Rejection.SPREAD_CONSTRAINT


def test_a_full_queue_does_not_make_a_cluster_lacking_its_stack_a_domain() -> None:
    # eu lacks a prerequisite every replica needs: it is no domain, full queue or not,
    # so region us takes every replica in both cases.
    gap = {
        "apiVersion": "v1",
        "kind": "CustomResourceDefinition",
        "name": "queues.scheduling.run.ai",
    }
    for used in (16, 0):
        eu = cluster("eu-1", h100(4), labels={"region": "eu"}, queues=[queue(16, used)])
        eu["status"]["stack"] = {"checked": 4, "missing": [{**gap, "scope": "Cluster"}]}
        decision = run(deployment(3, spread=[PER_REGION]), [_region("us-1", "us"), eu])
        assert _hosted(placements(decision)) == {"us-1": 3}, used
        trace = {entry.cluster: entry.reason for entry in decision.match_trace()}
        assert trace["eu-1"] == Rejection.STACK_INCOMPLETE
