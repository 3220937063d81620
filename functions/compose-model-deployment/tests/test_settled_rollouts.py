"""The settled path while a change is in flight (compose_model_deployment.settled): a
rollout waiting for its updated replicas, and a replacement loading after a yield,
decide on the deployment's own clusters as the whole fleet would (`test_settled`
holds the argument and its helpers)."""

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from .test_settled import (
    CHANGES,
    HIGH,
    STRATEGIES,
    advanced,
    assert_narrow,
    assert_wide,
    changed,
    decides_as_the_whole_fleet,
    fetch_loop,
    settled_world,
)


@settings(max_examples=40, deadline=None)
# A surge of a cluster made unreachable mid-rollout: found by hypothesis, kept so that
# a `keeps` which forgets `Decision.sought_room` fails every run, not one in seven.
@example(
    nodes=[2, 4, 2],
    wanted=2,
    strategy=None,
    steps=[False],
    change="unreachable",
    pick=0,
    serves=False,
)
@given(
    nodes=st.lists(st.integers(2, 6), min_size=1, max_size=3),
    wanted=st.integers(1, 3),
    strategy=st.sampled_from(STRATEGIES),
    steps=st.lists(st.booleans(), min_size=1, max_size=3),
    change=st.sampled_from(CHANGES),
    pick=st.integers(0, 7),
    serves=st.booleans(),
)
def test_a_rollout_in_flight_decides_as_the_whole_fleet(
    nodes: list[int],
    wanted: int,
    strategy: dict[str, Any] | None,
    steps: list[bool],
    change: str,
    pick: int,
    serves: bool,
) -> None:
    """A template change rolled over the fleet for a few reconciles (surges placed,
    replicas updated in place, each loading or serving), then any change: the narrow
    path decides as the whole fleet does, waiting for an updated replica included."""
    world, composite, observed = settled_world(nodes, wanted, strategy=strategy)
    world, composite, observed = changed(world, composite, observed, "template", 0, True)
    for serve in steps:
        world, composite, observed = advanced(world, composite, observed, serve)
    world, composite, observed = changed(world, composite, observed, change, pick, serves)
    decides_as_the_whole_fleet(world, composite, observed)


def test_a_rollout_waiting_for_its_surge_stays_narrow() -> None:
    """A template change surges one replica over the fleet (the decision looks for
    room); while that surge loads, the rollout can do nothing but wait, and each
    reconcile decides so on the deployment's own clusters, until the surge serves
    and the next step retires an outdated replica (a removal: over the fleet)."""
    world, composite, observed = settled_world([2, 4], 2)
    world, composite, observed = changed(world, composite, observed, "template", 0, True)
    got, calls = fetch_loop(world, composite, observed)
    assert_wide(got, calls)
    world, composite, observed = advanced(world, composite, observed, serve=False)
    assert len(observed) == 3  # two outdated, serving; the surge, loading
    got, calls = fetch_loop(world, composite, observed)
    assert_narrow(got, calls)
    assert "updatedReplicas" in got["desired"]["composite"]["resource"]["status"]
    world, composite, observed = advanced(world, composite, observed, serve=True)
    got, calls = fetch_loop(world, composite, observed)
    assert_wide(got, calls)


def test_a_replacement_loading_on_its_own_cluster_carries_no_yield() -> None:
    """A loading replica yields to a racing one of higher priority and is placed anew
    over the fleet, whose trace says `Yielded`; its replacement's reconciles decide on
    its own cluster and carry that trace without the entry: nothing yields now."""
    world, composite, observed = settled_world([2, 2], 1, loaded=False)
    (placed,) = observed.values()
    assert placed["spec"]["clusterName"] == "c0"
    world, composite, observed = changed(world, composite, observed, "race", 0, False)
    world, composite, observed = advanced(world, composite, observed, serve=False)
    (moved,) = observed.values()
    assert moved["spec"]["clusterName"] == "c1"
    assert "Yielded" in {entry["reason"] for entry in composite["status"]["matchTrace"]}
    got, calls = fetch_loop(world, composite, observed)
    assert sorted(got["requirements"]["resources"]) == [
        "inferenceclusters/c1",
        "modelreplicas/c1",
        "priorityclasses",
    ]
    assert calls == 2
    carried = got["desired"]["composite"]["resource"]["status"]["matchTrace"]
    assert carried == [e for e in composite["status"]["matchTrace"] if e["reason"] != "Yielded"]


def test_an_edit_is_decided_over_the_fleet_once_with_a_trace_of_its_own() -> None:
    """An edit the decision applies where each replica runs (maxSurge 0: a priority
    change updates a replica in place) is decided over the whole fleet once, so the
    match trace names what the spec as it now is meets, not the spec before it; the
    reconcile after it decides on the deployment's own cluster again."""
    in_place = {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    world, composite, observed = settled_world([2, 2], 1, strategy=in_place)
    (placed,) = observed.values()
    assert placed["spec"]["clusterName"] == "c0"
    only_high = next(o for o in world if o["metadata"]["name"] == "c1")
    only_high["spec"]["scheduling"] = {"allowedPriorities": ["high"]}
    world.append({**HIGH, "metadata": {"name": "low"}, "value": 10})
    composite["spec"]["priority"] = "low"
    world, composite, observed = advanced(world, composite, observed, serve=True)
    before = {(e["cluster"], e["reason"]) for e in composite["status"]["matchTrace"]}
    assert ("c1", "PriorityNotAllowed") in before

    composite["spec"]["priority"] = "high"
    got, calls = fetch_loop(world, composite, observed)
    assert_wide(got, calls)
    status = got["desired"]["composite"]["resource"]["status"]
    assert ("c1", "PriorityNotAllowed") not in {
        (e["cluster"], e["reason"]) for e in status["matchTrace"]
    }
    assert status["matchTraceSpec"] != composite["status"]["matchTraceSpec"]

    world, composite, observed = advanced(world, composite, observed, serve=True)
    got, calls = fetch_loop(world, composite, observed)
    assert_narrow(got, calls)
    assert got["desired"]["composite"]["resource"]["status"]["matchTrace"] == status["matchTrace"]
