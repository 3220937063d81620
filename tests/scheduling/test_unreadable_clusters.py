"""An InferenceCluster that exists but cannot be read is not gone: its replicas are held."""

from modelplane_models import InferenceCluster
from modelplane_models.model_deployment import MatchTraceEntry

from modelplane.core.vocabulary import Reason
from modelplane.scheduling import (
    Decision,
    Origin,
    Rejection,
    UnreadableCluster,
    read_fleet,
    schedule,
)
from modelplane.xfn.required import parse_all

from .builders import (
    cluster,
    deployment,
    h100,
    placements,
    read_clusters,
    read_dep,
    read_replicas,
    replica,
)
from .fake_engine import FakeEngine

BROKEN_A = UnreadableCluster("a", "status.gpuPools[0].nodes: Input should be a valid integer")


def decide(unreadable: list[UnreadableCluster], wanted: int = 2) -> Decision:
    dep = read_dep(deployment(wanted))
    return schedule(
        dep,
        read_clusters([cluster("b", h100(4)), cluster("c", h100(4))]),
        read_replicas(dep, [replica("a", 0), replica("b", 0)]),
        unreadable=unreadable,
        engine=FakeEngine(),
    )


def test_replicas_on_an_unreadable_cluster_are_held_and_it_says_so() -> None:
    decision = decide([BROKEN_A])
    origins = {r.name: r.origin for r in decision.replicas}
    assert origins == {"model-a-0": Origin.HELD, "model-b-0": Origin.RETAINED}
    assert decision.removed == ()
    (entry, *_) = decision.match_trace()
    assert entry == MatchTraceEntry(
        cluster="a",
        reason=Rejection.CLUSTER_UNREADABLE.value,
        message="cannot be read (status.gpuPools[0].nodes: Input should be a valid integer): "
        "its replicas are kept as recorded, nothing new is placed",
    )
    (warning,) = [e for e in decision.events if e.reason == Reason.CLUSTER_UNREADABLE]
    assert warning.message.startswith("InferenceCluster a cannot be read")


def test_nothing_new_goes_to_an_unreadable_cluster() -> None:
    decision = decide([BROKEN_A], wanted=4)
    assert placements(decision) == ["a/0:h100", "b/0:h100", "b/1:h100", "c/0:h100"]


def test_the_same_replica_is_dropped_once_its_cluster_is_really_gone() -> None:
    decision = decide([])
    (removed,) = decision.removed
    assert (removed.name, removed.reason) == ("model-a-0", "cluster no longer exists")


def test_a_cluster_whose_name_cannot_be_read_holds_every_replica_whose_cluster_is_unknown() -> None:
    decision = decide([UnreadableCluster(None, "metadata: Input should be a valid dictionary")])
    assert {r.name: r.origin for r in decision.replicas}["model-a-0"] is Origin.HELD
    assert decision.removed == ()
    # It has no name to trace under; the warning says what is wrong.
    assert all(entry.cluster != "" for entry in decision.match_trace())
    assert any("(name unreadable)" in e.message for e in decision.events)


def test_a_fleet_with_only_unreadable_clusters_says_none_can_be_read() -> None:
    dep = read_dep(deployment(1))
    decision = schedule(dep, [], [], unreadable=[BROKEN_A], engine=FakeEngine())
    assert decision.condition.reason == Reason.NO_CLUSTERS
    assert "no readable InferenceClusters in the fleet (1 cannot be read)" in (
        decision.condition.message
    )


def test_read_fleet_keeps_clusters_the_adapter_refuses_apart() -> None:
    good = cluster("good", h100())
    dra_without_class = cluster("bad", h100())
    del dra_without_class["status"]["gpuPools"][0]["devices"][0]["deviceClassName"]
    garbage = {"metadata": "not a map"}
    parsed = parse_all([good, dra_without_class, garbage], InferenceCluster)
    (unnamed,) = parsed.unreadable
    assert (unnamed.name, unnamed.named) == ("#2", False)
    fleet = read_fleet(parsed.items)
    assert [c.name for c in fleet.clusters] == ["good"]
    assert fleet.unreadable == (
        UnreadableCluster(
            "bad", "status.gpuPools[0].devices[0].deviceClassName: is required when claim is DRA"
        ),
    )


def test_an_unreadable_cluster_with_a_garbage_name_counts_as_nameless() -> None:
    # Names never change, so a cluster whose name is garbage is some cluster whose
    # name cannot be read, not a new one: every replica's cluster may be it.
    renamed = cluster("trailing.", h100())
    del renamed["status"]["gpuPools"][0]["devices"][0]["deviceClassName"]
    fleet = read_fleet(
        [parse_all([renamed], InferenceCluster).items[0]],
        [UnreadableCluster("x" * 300, "spec: Input should be a valid dictionary")],
    )
    assert [u.name for u in fleet.unreadable] == [None, None]
