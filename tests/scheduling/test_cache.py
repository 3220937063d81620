"""A deployment's model cache in placement: warmth breaks ties last, storage filters,
an unusable cacheRef holds."""

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st
from modelplane_models.model_deployment import MatchTraceEntry

from modelplane.core.issues import Issue
from modelplane.core.vocabulary import Reason
from modelplane.scheduling import CacheView, Decision, Rejection

from .builders import HOPPER, Obj, cluster, deployment, h100, l4, placements, replica, request, run

CACHE = "kimi"


def test_a_new_replica_prefers_the_cluster_where_the_cache_is_ready() -> None:
    clusters = [cluster("a", h100()), cluster("b", h100())]
    # Without a cache, name order decides between equal clusters.
    assert placements(run(deployment(1, HOPPER), clusters)) == ["a/0:h100"]
    decision = run(deployment(1, HOPPER), clusters, cache=CacheView(CACHE, frozenset({"b"})))
    assert placements(decision) == ["b/0:h100"]
    [placed] = [e for e in decision.events if e.reason == Reason.REPLICA_PLACED]
    assert "model cache kimi is Ready here" in placed.message
    trace = decision.match_trace()
    assert trace == [
        MatchTraceEntry(
            cluster="a",
            reason=Rejection.MODEL_CACHE_NOT_READY.value,
            message="model cache kimi is not Ready here; replicas go where it is (b)",
        )
    ]
    # A preference is not a rejection: both clusters count as available.
    assert decision.condition.status is True


def test_warmth_never_beats_spread() -> None:
    clusters = [cluster("a", h100()), cluster("b", h100())]
    decision = run(deployment(2, HOPPER), clusters, cache=CacheView(CACHE, frozenset({"b"})))
    assert sorted(placements(decision)) == ["a/0:h100", "b/0:h100"]
    assert decision.match_trace() == []


def test_warmth_never_beats_best_fit() -> None:
    # One GPU fits the small pool on a; the cache being Ready on b's big pool does not
    # make the replica fragment an 8-GPU node.
    clusters = [cluster("a", l4()), cluster("b", h100())]
    decision = run(
        deployment(1, request("gpu", 1)), clusters, cache=CacheView(CACHE, frozenset({"b"}))
    )
    assert placements(decision) == ["a/0:l4"]


def test_warmth_never_beats_capacity() -> None:
    full = replica("b", 0, "h100", deployment_name="other", serving=True)
    clusters = [cluster("a", h100(nodes=1)), cluster("b", h100(nodes=1))]
    decision = run(
        deployment(1, HOPPER), clusters, [full], cache=CacheView(CACHE, frozenset({"b"}))
    )
    assert placements(decision) == ["a/0:h100"]


def test_a_cluster_without_cache_storage_takes_no_new_replica_but_keeps_its_own() -> None:
    clusters = [cluster("a", h100()), cluster("b", h100())]
    cache = CacheView(CACHE, unable={"a": "holds no model caches"})
    decision = run(deployment(2, HOPPER), clusters, [replica("a", 0)], cache=cache)
    assert sorted(placements(decision)) == ["a/0:h100", "b/0:h100"]
    decision = run(deployment(2, HOPPER), clusters, cache=cache)
    assert placements(decision) == ["b/0:h100", "b/1:h100"]
    assert decision.match_trace()[0].reason == Rejection.NO_MODEL_CACHE_STORAGE.value


def test_a_full_queue_never_hides_a_cluster_without_cache_storage() -> None:
    """Its queue is full now, but it could never hold the cache: the trace gives the
    lasting reason, and the cluster is no spread domain, so it keeps no decision from
    holding (a drain onto it would otherwise remove the replicas that must move)."""
    full = {"name": "team", "provider": "KAI", "namespaces": ["ml"], "gpu": {"quota": 8, "used": 8}}
    clusters = [cluster("a", h100(), queues=[full]), cluster("b", h100())]
    cache = CacheView(CACHE, unable={"a": "holds no model caches"})
    decision = run(deployment(1, HOPPER), clusters, cache=cache)
    assert placements(decision) == ["b/0:h100"]
    (entry,) = decision.match_trace()
    assert (entry.cluster, entry.reason) == ("a", Rejection.NO_MODEL_CACHE_STORAGE.value)


def test_a_replica_on_a_cluster_without_cache_storage_is_held_naming_no_selector() -> None:
    """Its only cluster cannot hold the cache (its queue full of the replica or not):
    nowhere takes a new replica, so the replica is held where it runs, and the message
    does not send the team to a nodeSelector that matches."""
    full = {"name": "team", "provider": "KAI", "namespaces": ["ml"], "gpu": {"quota": 8, "used": 8}}
    cache = CacheView(CACHE, unable={"a": "holds no model caches"})
    for queues in ([], [full]):
        clusters = [cluster("a", h100(), queues=queues)]
        decision = run(deployment(1, HOPPER), clusters, [replica("a", 0)], cache=cache)
        assert placements(decision) == ["a/0:h100"]
        assert decision.condition.status is False
        assert "nodeSelector" not in decision.condition.message
        assert "unable to run them" in decision.condition.message


def test_an_unknown_cache_places_nothing_and_keeps_what_runs() -> None:
    problem = Issue(
        "spec.model.cacheRef.name", "ModelCache 'kimi' not found", Reason.MODEL_CACHE_NOT_FOUND
    )
    clusters = [cluster("a", h100()), cluster("b", h100())]
    decision = run(
        deployment(3, HOPPER), clusters, [replica("a", 0)], cache=CacheView(CACHE, problem=problem)
    )
    assert placements(decision) == ["a/0:h100"]
    assert decision.condition.status is False
    assert decision.condition.reason == Reason.MODEL_CACHE_NOT_FOUND
    assert "spec.model.cacheRef.name" in decision.condition.message


@st.composite
def fleets(draw: st.DrawFn) -> tuple[list[Obj], frozenset[str], int]:
    count = draw(st.integers(1, 5))
    clusters: list[Obj] = []
    for i in range(count):
        pools = draw(st.lists(st.sampled_from(["h100", "l4"]), min_size=1, max_size=2, unique=True))
        made = [h100(nodes=draw(st.integers(1, 2))) if p == "h100" else l4(nodes=1) for p in pools]
        clusters.append(cluster(f"c{i}", *made))
    ready = frozenset(draw(st.sets(st.sampled_from([c["metadata"]["name"] for c in clusters]))))
    return clusters, ready, draw(st.integers(1, 6))


@given(fleets())
def test_warmth_changes_where_not_how_much_or_which_pools(
    fleet: tuple[list[Obj], frozenset[str], int],
) -> None:
    """Warmth only breaks ties: with or without it the same number of replicas is
    placed, on the same pools, spread as evenly."""
    clusters, ready, replicas = fleet
    dep = deployment(replicas, request("gpu", 1))
    cold = run(dep, clusters)
    warm = run(dep, clusters, cache=CacheView(CACHE, ready))
    assert len(warm.replicas) == len(cold.replicas)

    def pools(decision: Decision) -> list[str]:
        return sorted(p.split(":")[1] for p in placements(decision))

    def loads(decision: Decision) -> list[int]:
        return sorted(Counter(r.cluster for r in decision.replicas).values())

    assert pools(warm) == pools(cold)
    assert loads(warm) == loads(cold)
