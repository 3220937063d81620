"""Each invariant `--faults` checks, broken and kept, on worlds built by hand."""

from __future__ import annotations

from typing import Any

from modelplane_cli.render.faults import FAULT_ROUNDS, Faults
from modelplane_cli.render.invariants import (
    CONVERGES,
    POOL_NOT_OVERCOMMITTED,
    ROLLOUT_BUDGET,
    SERVING_KEPT,
    Checker,
    snapshot,
    violations,
)
from modelplane_cli.render.world import ObjectKey, World

Obj = dict[str, Any]
API = "modelplane.ai/v1alpha1"


def deployment(replicas: int, surge: int | str = "25%", unavailable: int | str = "25%") -> Obj:
    return {
        "apiVersion": API,
        "kind": "ModelDeployment",
        "metadata": {"name": "m", "namespace": "ns"},
        "spec": {
            "replicas": replicas,
            "strategy": {"rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
        },
    }


# A published device as the InferenceCluster model reads it: named, with its driver.
GPU = {"name": "gpu", "driver": "gpu.nvidia.com", "count": 8}


def cluster(name: str, nodes: int = 1) -> Obj:
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "status": {
            "gpuPools": [{"name": "h100", "nodes": nodes, "devices": [GPU]}],
        },
    }


def replica(
    name: str,
    cluster_name: str = "east",
    *,
    serving: bool = True,
    owner: str = "m",
    revision: str = "1",
    devices: int = 8,
) -> Obj:
    return {
        "apiVersion": API,
        "kind": "ModelReplica",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "annotations": {"modelplane.ai/revision": revision},
        },
        "spec": {
            "deploymentName": owner,
            "clusterName": cluster_name,
            "workers": {"nodePoolName": "h100", "deviceRequests": [{"count": devices}]},
        },
        "status": {"conditions": [{"type": "Serving", "status": "True" if serving else "False"}]},
    }


def broken(before: list[Obj], after: list[Obj]) -> list[tuple[str, str]]:
    return [(v.invariant, v.object) for v in violations(3, snapshot(before), snapshot(after))]


CLUSTERS = [cluster("east", nodes=4), cluster("west", nodes=4)]


def test_removing_a_serving_replica_with_no_replacement_breaks_serving_kept() -> None:
    before = [deployment(2, unavailable=0), *CLUSTERS, replica("a"), replica("b", "west")]
    after = [deployment(2, unavailable=0), *CLUSTERS, replica("b", "west")]
    assert broken(before, after) == [(SERVING_KEPT, "ModelReplica ns/a")]
    (found,) = violations(3, snapshot(before), snapshot(after))
    assert str(found).startswith("round 3: invariant ServingKept broken: ModelReplica ns/a: ")


def test_a_move_whose_replacement_serves_keeps_serving() -> None:
    before = [
        deployment(2, unavailable=0),
        *CLUSTERS,
        replica("a"),
        replica("b"),
        replica("c", "west"),
    ]
    after = [deployment(2, unavailable=0), *CLUSTERS, replica("b"), replica("c", "west")]
    assert broken(before, after) == []


def test_a_scale_down_keeps_serving() -> None:
    before = [deployment(3), *CLUSTERS, replica("a"), replica("b"), replica("c")]
    after = [deployment(1), *CLUSTERS, replica("a")]
    assert broken(before, after) == []


def test_a_removal_within_max_unavailable_keeps_serving() -> None:
    names = "abcd"
    before = [deployment(4, unavailable=1), *CLUSTERS, *(replica(n) for n in names)]
    after = [deployment(4, unavailable=1), *CLUSTERS, *(replica(n) for n in names[1:])]
    assert broken(before, after) == []
    after = [deployment(4, unavailable=1), *CLUSTERS, *(replica(n) for n in names[2:])]
    assert {b[0] for b in broken(before, after)} == {SERVING_KEPT}


def test_a_deleted_cluster_or_deployment_takes_its_replicas() -> None:
    before = [deployment(1, unavailable=0), *CLUSTERS, replica("a")]
    assert broken(before, [deployment(1, unavailable=0), CLUSTERS[1]]) == []
    assert broken(before, CLUSTERS) == []


def test_a_preemption_keeps_serving() -> None:
    before = [deployment(1, unavailable=0), *CLUSTERS, replica("a")]
    after = [deployment(1, unavailable=0), *CLUSTERS, replica("x", owner="other", serving=False)]
    assert broken(before, after) == []


def test_a_replica_that_stops_serving_by_a_fault_is_not_taken_down() -> None:
    before = [deployment(2, unavailable=0), *CLUSTERS, replica("a"), replica("b")]
    after = [deployment(2, unavailable=0), *CLUSTERS, replica("a", serving=False), replica("b")]
    assert broken(before, after) == []


def endpoint(replica_name: str) -> Obj:
    return {
        "apiVersion": API,
        "kind": "ModelEndpoint",
        "metadata": {"name": replica_name, "namespace": "ns"},
        "spec": {"deploymentName": "m", "replicaName": replica_name},
    }


def test_unrouting_a_serving_replica_with_no_replacement_breaks_serving_kept() -> None:
    """A retiring replica still runs, but no traffic reaches it: it counts as removed."""
    routed = [deployment(2, unavailable=0), *CLUSTERS, replica("a"), replica("b", "west")]
    before = [*routed, endpoint("a"), endpoint("b")]
    after = [*routed, endpoint("b")]
    assert broken(before, after) == [(SERVING_KEPT, "ModelReplica ns/a")]
    (found,) = violations(3, snapshot(before), snapshot(after))
    assert "removed while serving (unrouted, kept running)" in str(found)
    # Unrouted once its replacement serves: kept.
    both = [*routed, replica("c", "west")]
    assert (
        broken(
            [*both, endpoint("a"), endpoint("b"), endpoint("c")],
            [*both, endpoint("b"), endpoint("c")],
        )
        == []
    )
    # A replica a fault stops serving loses its route too: not taken down.
    faulted = [
        deployment(2, unavailable=0),
        *CLUSTERS,
        replica("a", serving=False),
        replica("b", "west"),
    ]
    assert broken(before, [*faulted, endpoint("b")]) == []


def test_a_pool_newly_overcommitted_by_serving_replicas_is_broken() -> None:
    small = [cluster("east", nodes=1), cluster("west")]
    before = [deployment(2), *small, replica("a"), replica("b", serving=False)]
    after = [deployment(2), *small, replica("a"), replica("b")]
    assert broken(before, after) == [(POOL_NOT_OVERCOMMITTED, "InferenceCluster east")]
    # An overcommitment the round did not make is not this round's.
    assert broken(after, after) == []


def test_a_replica_beyond_the_pool_that_does_not_serve_may_wait_to_yield() -> None:
    small = [cluster("east", nodes=1), cluster("west")]
    before = [deployment(2), *small, replica("a")]
    after = [deployment(2), *small, replica("a"), replica("b", serving=False)]
    assert broken(before, after) == []


def test_a_converged_world_overcommits_no_pool() -> None:
    small = [cluster("east", nodes=1), cluster("west")]
    world = World([deployment(2), *small, replica("a"), replica("b", serving=False)])
    faults = Faults(1)
    checker = Checker(world.objects(), "2026-12-01T10:30:00Z", faults)
    faults.round = FAULT_ROUNDS + 1
    assert checker.end_round(FAULT_ROUNDS + 1, world, True, world.revision, False)
    assert [(v.invariant, v.object) for v in checker.violations] == [
        (POOL_NOT_OVERCOMMITTED, "InferenceCluster east")
    ]


def test_growing_past_max_surge_breaks_the_rollout_budget() -> None:
    before = [deployment(2, surge=1), *CLUSTERS, replica("a"), replica("b")]
    fine = [*before, replica("c", serving=False)]
    assert broken(before, fine) == []
    over = [*fine, replica("d", serving=False)]
    assert broken(before, over) == [(ROLLOUT_BUDGET, "ModelDeployment ns/m")]


def test_updating_in_place_past_max_unavailable_breaks_the_rollout_budget() -> None:
    names = "abcd"
    before = [deployment(4, unavailable=1), *CLUSTERS, *(replica(n) for n in names)]
    one = [
        deployment(4, unavailable=1),
        *CLUSTERS,
        replica("a", revision="2"),
        *(replica(n) for n in names[1:]),
    ]
    assert broken(before, one) == []
    two = [
        deployment(4, unavailable=1),
        *CLUSTERS,
        replica("a", revision="2"),
        replica("b", revision="2"),
        *(replica(n) for n in names[2:]),
    ]
    assert broken(before, two) == [(ROLLOUT_BUDGET, "ModelDeployment ns/m")]


def test_a_world_still_changing_after_the_faults_breaks_converges() -> None:
    checker = Checker([], "2026-12-01T10:30:00Z", Faults(1))
    key = ObjectKey(API, "ModelDeployment", "ns", "m")
    checker.not_converged(26, [key], 20)
    (found,) = checker.violations
    assert (found.invariant, found.object, found.round) == (CONVERGES, "ModelDeployment ns/m", 26)
    assert "20 rounds after the last fault" in found.message


def lost(name: str, nodes: int = 4) -> Obj:
    """A cluster whose InferenceCluster says Reachable=False."""
    found = cluster(name, nodes)
    found["status"]["conditions"] = [{"type": "Reachable", "status": "False"}]
    return found


def stranded(name: str) -> Obj:
    """A replica on an unreachable cluster that served its revision as last read."""
    obj = replica(name)
    obj["status"] = {
        "servingRevision": "1",
        "conditions": [{"type": "Serving", "status": "Unknown", "reason": "ClusterUnreachable"}],
    }
    return obj


def test_replacements_of_stranded_replicas_are_outside_the_surge() -> None:
    fleet = [lost("east"), cluster("west", nodes=4)]
    before = [deployment(2, surge=0, unavailable=1), *fleet, stranded("a"), stranded("b")]
    after = [*before, replica("c", "west", serving=False), replica("d", "west", serving=False)]
    assert broken(before, after) == []
    # On a reachable cluster the same four replicas are past the surge.
    reachable = [cluster("east", nodes=4), cluster("west", nodes=4)]
    assert broken([*before[:1], *reachable, *before[3:]], [*after[:1], *reachable, *after[3:]]) == [
        (ROLLOUT_BUDGET, "ModelDeployment ns/m")
    ]


def test_removing_a_stranded_replica_before_its_replacement_serves_breaks_serving_kept() -> None:
    fleet = [lost("east"), cluster("west", nodes=4)]
    before = [
        deployment(1, unavailable=0),
        *fleet,
        stranded("a"),
        replica("b", "west", serving=False),
    ]
    assert broken(before, [*before[:3], before[4]]) == [(SERVING_KEPT, "ModelReplica ns/a")]
    replaced = [*before[:3], replica("b", "west")]
    assert broken(before, replaced) == []


def test_unrouting_stranded_replicas_once_a_replica_elsewhere_serves_keeps_serving() -> None:
    """Failover drops a stranded replica's route once any replica on a reachable
    cluster serves: by design, not a loss (it may not serve at all)."""
    fleet = [lost("east"), cluster("west", nodes=4)]
    head = [deployment(4, unavailable=1), *fleet, replica("w1", "west"), replica("w2", "west")]
    stranded_replicas = [stranded("a"), stranded("b"), stranded("c")]
    before = [*head, *stranded_replicas, *(endpoint(n) for n in ("w1", "w2", "a", "b", "c"))]
    after = [*head, *stranded_replicas, endpoint("w1"), endpoint("w2")]
    assert broken(before, after) == []
    # With nothing routed elsewhere, unrouting them takes the model off its route.
    alone = [deployment(2, unavailable=0), *fleet, stranded("a"), stranded("b")]
    assert broken([*alone, endpoint("a"), endpoint("b")], alone) == [
        (SERVING_KEPT, "ModelReplica ns/a"),
        (SERVING_KEPT, "ModelReplica ns/b"),
    ]


def test_a_cluster_back_mid_failover_adds_no_replicas_to_the_surge() -> None:
    """Kept stranded replicas and their replacements are counted alike on both sides
    once the cluster is back: nothing was created."""
    stay = [stranded("a"), stranded("b"), replica("c", "west"), replica("d", "west")]
    before = [deployment(2, surge=0, unavailable=1), lost("east"), cluster("west", nodes=4), *stay]
    back = [
        deployment(2, surge=0, unavailable=1),
        cluster("east", nodes=4),
        cluster("west", nodes=4),
    ]
    assert broken(before, [*back, *stay]) == []


def failed_reconcile(name: str, cluster_name: str, served: bool = True) -> Obj:
    """A replica whose last reconcile failed (a function call answered Unavailable):
    Crossplane v2.3 wrote Unknown (`FatalError`) over Serving and kept the rest of its
    status, the revision of its last verdict (empty when that verdict was False)."""
    obj = replica(name, cluster_name)
    obj["status"] = {
        "servingRevision": "1" if served else "",
        "conditions": [{"type": "Serving", "status": "Unknown", "reason": "FatalError"}],
    }
    return obj


def test_a_replica_whose_reconcile_failed_serves_as_last_read() -> None:
    """Seed 5007 of `bench faults --set kai`, rounds 6 and 7: a failed reconcile stops
    no workload, so the replica serves as its last verdict said."""
    fleet = [lost("east"), cluster("west", nodes=4)]
    head = [deployment(2, unavailable=0), *fleet, stranded("a")]
    # Failover unroutes the stranded replica: the one elsewhere is routed and served
    # when its deployment decided, and its own reconcile failed later in the round.
    before = [*head, replica("w", "west"), endpoint("a"), endpoint("w")]
    assert broken(before, [*head, failed_reconcile("w", "west"), endpoint("w")]) == []
    # Unrouting it for the failed reconcile takes a serving replica off its route.
    reachable = [deployment(2, unavailable=0), *CLUSTERS, replica("a"), endpoint("a")]
    faulted = [*reachable, failed_reconcile("w", "west")]
    assert broken([*faulted, endpoint("w")], [*reachable, replica("w", "west")]) == [
        (SERVING_KEPT, "ModelReplica ns/w")
    ]
    # One whose last verdict was False never served: nothing to keep.
    unserved = [*reachable, failed_reconcile("w", "west", served=False)]
    assert broken(unserved, [*reachable, replica("w", "west", serving=False)]) == []
