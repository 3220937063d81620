"""A cluster whose stack lacks what a replica needs gets no new replicas; old ones move
make-before-break."""

import pytest

from modelplane.scheduling import Origin, Rejection

from .builders import Obj, cluster, deployment, gpu, h100, placements, pool, replica, run


def lacking(obj: Obj, *missing: Obj) -> Obj:
    obj["status"]["stack"] = {"checked": 4, "missing": list(missing)}
    return obj


def missing(kind: str, name: str, scope: str | None, **more: str) -> Obj:
    entry: Obj = {"apiVersion": "v1", "kind": kind, "name": name, **more}
    if scope is not None:
        entry["scope"] = scope
    return entry


LWS = missing("CustomResourceDefinition", "leaderworkersets.leaderworkerset.x-k8s.io", "MultiNode")
QUEUE_CRD = missing("CustomResourceDefinition", "queues.scheduling.run.ai", "Cluster")


@pytest.mark.parametrize(
    ("entry", "dep", "kept_off"),
    [
        (QUEUE_CRD, deployment(1), True),
        (LWS, deployment(1), False),
        (LWS, deployment(1, topology={"pipeline": 2}), True),
        (missing("PriorityClass", "prod", "Priority"), deployment(1, priority="prod"), True),
        (missing("PriorityClass", "prod", "Priority"), deployment(1, priority="dev"), False),
        (missing("LocalQueue", "q", "Namespace", tenant="ml"), deployment(1), True),
        (missing("LocalQueue", "q", "Namespace", tenant="other"), deployment(1), False),
        # A queue only its own replicas use says nothing about a new deployment's.
        (missing("Queue", "q", "Replica"), deployment(1), False),
        # An entry that does not say who it keeps away keeps everyone away.
        (missing("Queue", "q", None), deployment(1), True),
    ],
)
def test_a_gap_keeps_away_the_replicas_that_need_it(entry: Obj, dep: Obj, kept_off: bool) -> None:
    decision = run(dep, [lacking(cluster("a", h100()), entry), cluster("b", h100())])
    assert placements(decision) == (["b/0:h100"] if kept_off else ["a/0:h100"])
    trace = {t.cluster: t.reason for t in decision.match_trace()}
    assert (trace.get("a") == Rejection.STACK_INCOMPLETE) is kept_off


def test_a_missing_device_class_rules_out_only_the_pools_that_need_it() -> None:
    other = pool("amd", 2, gpu(8, "Hopper", 80, device_class="gpu.amd.com"))
    gaps = missing("DeviceClass", "gpu.nvidia.com", "DeviceClass")
    decision = run(deployment(1), [lacking(cluster("a", h100(), other), gaps)])
    assert placements(decision) == ["a/0:amd"]
    (entry,) = decision.match_trace()
    assert (entry.pool, entry.reason) == ("h100", Rejection.STACK_INCOMPLETE)
    assert entry.message == ("the cluster lacks DeviceClass gpu.nvidia.com, which its devices need")


def test_a_replica_already_there_moves_make_before_break() -> None:
    dep = deployment(1, topology={"pipeline": 2})
    fleet = [lacking(cluster("a", h100()), LWS), cluster("b", h100())]
    stranded = replica("a", 0, topology={"pipeline": 2})
    first = run(dep, fleet, [stranded])
    # Kept (not serving, since its cluster refuses it) until its replacement is placed.
    assert placements(first) == ["a/0:h100", "b/0:h100"]
    assert [r.origin for r in first.replicas if r.cluster == "a"] == [Origin.PENDING]
    assert first.removed == ()

    second = run(dep, fleet, [stranded, replica("b", 0, topology={"pipeline": 2})])
    assert placements(second) == ["b/0:h100"]
    (gone,) = second.removed
    assert gone.reason.startswith("moved (its cluster cannot run it: the cluster lacks ")


def test_a_replica_on_a_pool_whose_device_class_is_missing_moves() -> None:
    device_class = missing("DeviceClass", "gpu.nvidia.com", "DeviceClass")
    fleet = [lacking(cluster("a", h100()), device_class), cluster("b", h100())]
    decision = run(deployment(1), fleet, [replica("a", 0, serving=True)])

    assert placements(decision) == ["a/0:h100", "b/0:h100"]
    moving = [r for r in decision.replicas if r.cluster == "a"]
    assert [r.origin for r in moving] == [Origin.PENDING]


def test_the_condition_says_the_selected_clusters_lack_prerequisites() -> None:
    decision = run(deployment(1), [lacking(cluster("a", h100()), QUEUE_CRD)])
    assert decision.replicas == ()
    assert decision.condition.reason == "InsufficientCapacity"
    assert decision.condition.message == (
        "0 of 1 replicas scheduled: the 1 selected cluster lacks prerequisites its replicas "
        "need (see the match trace); 0/1 clusters available: 1 StackIncomplete"
    )


def test_a_pool_claimed_another_way_keeps_only_the_ways_whose_class_exists() -> None:
    mixed = pool(
        "mixed",
        2,
        gpu(8, "Hopper", 80, name="a", device_class="gpu.nvidia.com"),
        gpu(8, "Hopper", 80, name="b", device_class="gpu.example.com"),
    )
    gaps = missing("DeviceClass", "gpu.nvidia.com", "DeviceClass")
    decision = run(deployment(1), [lacking(cluster("a", mixed), gaps)])
    (placed,) = decision.replicas
    (role,) = placed.roles
    assert [c.device_class_name for c in role.device_requests] == ["gpu.example.com"]
    assert decision.match_trace() == []
