"""Invariants over generated fleets: never overcommit, never displace a serving replica,
best fit, always deterministic."""

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.core.vocabulary import LABEL_DEPLOYMENT
from modelplane.scheduling import (
    Decision,
    Origin,
    Rejection,
    schedule,
)
from modelplane.scheduling.rollout import budget

from .builders import (
    Obj,
    claim,
    cluster,
    deployment,
    pool,
    read_clusters,
    read_dep,
    read_replicas,
    replica,
    request,
    role,
)
from .fake_engine import FakeEngine
from .fleet_strategies import CLUSTER_NAMES, PER_NODE, POOL_SHAPES, PRIORITIES, scenarios


def _decide(dep: Obj, clusters: list[Obj], replicas: list[Obj]) -> Decision:
    deployment_ = read_dep(dep)
    return schedule(
        deployment_,
        read_clusters(clusters),
        read_replicas(deployment_, replicas),
        engine=FakeEngine(),
        priorities=PRIORITIES,
    )


def _serving(obj: Obj) -> bool:
    return "status" in obj


def _displaceable(other: Obj, dep: Obj) -> bool:
    """Whether a new replica of `dep` may take the capacity `other` holds: it is not
    serving and of strictly lower priority (no generated cluster has a default)."""
    mine = PRIORITIES.value(dep["spec"].get("priority"))
    return not _serving(other) and PRIORITIES.value(other["spec"].get("priority")) < mine


def _packs(sizes: list[int], nodes: int, capacity: int) -> bool:
    """Exact bin packing: can these pods share `nodes` nodes of `capacity` devices?"""
    items = sorted(sizes, reverse=True)
    if any(size > capacity for size in items):
        return False
    free = [capacity] * nodes

    def place(i: int) -> bool:
        if i == len(items):
            return True
        tried: set[int] = set()
        for n in range(nodes):
            if free[n] >= items[i] and free[n] not in tried:
                tried.add(free[n])
                free[n] -= items[i]
                if place(i + 1):
                    return True
                free[n] += items[i]
        return False

    return place(0)


def _pods(role_obj: dict[str, Any], claims: int) -> list[int]:
    topology = role_obj.get("topology") or {}
    count = role_obj.get("count", 1) * topology.get("pipeline", 1)
    return [claims] * count


def _usage(
    dep: Obj, clusters: list[Obj], replicas: list[Obj], decision: Decision
) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], list[int]]]:
    """Nodes per pool, and the pods charged to each: the decision's replicas and every
    other deployment's replica a new one may not displace."""
    nodes = {
        (c["metadata"]["name"], p["name"]): p["nodes"]
        for c in clusters
        for p in c["status"]["gpuPools"]
    }
    usage: dict[tuple[str, str], list[int]] = {key: [] for key in nodes}
    for other in replicas:
        if other["metadata"]["labels"][LABEL_DEPLOYMENT] == "model":
            continue
        if _displaceable(other, dep):
            continue
        spec = other["spec"]
        role_obj = spec["workers"]
        key = (spec["clusterName"], role_obj["nodePoolName"])
        if key in usage:
            capacity = PER_NODE[key[1]]
            demand = sum(c["count"] for c in role_obj["deviceRequests"])
            # Claims that no longer fit a node are charged a whole node each.
            usage[key].extend(_pods(role_obj, min(demand, capacity)))
    for desired in decision.replicas:
        for placement in desired.roles:
            key = (desired.cluster, placement.pool)
            demand = sum(r.count for r in placement.device_requests)
            if key[1] in PER_NODE:
                # A replica kept as it runs (held, or pending a rollout) may record
                # claims that no longer fit its pool's nodes: charged a whole node each.
                demand = min(demand, PER_NODE[key[1]])
            # A held replica may be pinned to a pool that is gone; nothing is placed then.
            usage.setdefault(key, []).extend(_pods(placement.as_dict(), demand))
    return nodes, usage


@settings(max_examples=300, deadline=None)
@given(scenario=scenarios())
def test_no_pool_is_ever_overcommitted(scenario: tuple[Obj, list[Obj], list[Obj]]) -> None:
    """Where the decision places, everything it cannot displace still fits: serving
    replicas, and those of equal or higher priority, are never displaced."""
    dep, clusters, replicas = scenario
    decision = _decide(dep, clusters, replicas)
    nodes, usage = _usage(dep, clusters, replicas, decision)
    touched = {
        (r.cluster, p.pool) for r in decision.replicas if r.origin is Origin.PLACED for p in r.roles
    }
    for key in touched:
        assert _packs(usage[key], nodes[key], PER_NODE[key[1]]), (key, usage[key])


@settings(max_examples=150, deadline=None)
@given(scenario=scenarios(), data=st.data())
def test_order_of_inputs_does_not_matter(
    scenario: tuple[Obj, list[Obj], list[Obj]], data: st.DataObject
) -> None:
    dep, clusters, replicas = scenario
    decision = _decide(dep, clusters, replicas)
    shuffled_clusters = data.draw(st.permutations(clusters))
    shuffled_replicas = data.draw(st.permutations(replicas))
    assert _decide(dep, shuffled_clusters, shuffled_replicas) == decision
    assert _decide(dep, clusters, replicas) == decision


@settings(max_examples=150, deadline=None)
@given(scenario=scenarios())
def test_identity_and_retention(scenario: tuple[Obj, list[Obj], list[Obj]]) -> None:
    dep, clusters, replicas = scenario
    decision = _decide(dep, clusters, replicas)
    identities = [(r.cluster, r.index) for r in decision.replicas]
    assert len(set(identities)) == len(identities)
    assert len({r.name for r in decision.replicas}) == len(decision.replicas)
    # Beyond spec.replicas only old replicas a rollout keeps beside their replacements.
    current = [r for r in decision.replicas if r.origin is not Origin.PENDING]
    assert len(current) <= dep["spec"]["replicas"]
    surge = budget(read_dep(dep).strategy, dep["spec"]["replicas"]).surge
    assert len(decision.replicas) <= dep["spec"]["replicas"] + surge
    own = {
        r["metadata"]["name"]: (r["spec"]["clusterName"], r["spec"]["index"])
        for r in replicas
        if r["metadata"]["labels"][LABEL_DEPLOYMENT] == "model"
    }
    removed = {r.name for r in decision.removed}
    for desired in decision.replicas:
        if desired.retained:
            assert own[desired.name] == (desired.cluster, desired.index)
    # Every existing replica of the deployment is either still desired or removed.
    kept = {r.name for r in decision.replicas if r.retained}
    assert kept | removed == set(own)
    assert not kept & removed
    fleet = {c["metadata"]["name"] for c in clusters}
    assert all(r.cluster in fleet for r in decision.replicas)


# Rejections that keep a cluster from hosting any new replica of the deployment.
_WHOLE_CLUSTER = {
    Rejection.CLUSTER_SELECTOR_MISMATCH,
    Rejection.PRIORITY_NOT_ALLOWED,
    Rejection.NO_POOLS,
    Rejection.NO_MATCHING_POOL,
}


@settings(max_examples=150, deadline=None)
@given(scenario=scenarios())
def test_match_trace_is_well_formed(scenario: tuple[Obj, list[Obj], list[Obj]]) -> None:
    dep, clusters, replicas = scenario
    decision = _decide(dep, clusters, replicas)
    trace = decision.match_trace()
    split = "decode" in dep["spec"]
    keys = [(e.cluster or "", e.pool is not None, e.pool or "", e.role or "") for e in trace]
    assert keys == sorted(keys)
    # A pool may be both full and the place a replica yielded; never twice for one cause.
    assert len({(*key, e.reason) for key, e in zip(keys, trace, strict=True)}) == len(keys)
    new_hosts = {r.cluster for r in decision.replicas if r.new}
    for entry in trace:
        reason = Rejection(entry.reason)
        assert entry.message
        # A role is named exactly on the pool entries of a disaggregated deployment.
        assert (entry.role is not None) == (split and entry.pool is not None), entry
        if entry.pool is None and reason in _WHOLE_CLUSTER:
            assert entry.cluster not in new_hosts, entry


@settings(max_examples=200, deadline=None)
@given(scenario=scenarios())
def test_a_serving_replica_never_yields(scenario: tuple[Obj, list[Obj], list[Obj]]) -> None:
    dep, clusters, replicas = scenario
    decision = _decide(dep, clusters, replicas)
    by_name = {r["metadata"]["name"]: r for r in replicas}
    yielded = [r for r in decision.removed if "yielded" in r.reason]
    for removed in yielded:
        assert not _serving(by_name[removed.name]), removed
    kept = {r.name for r in decision.replicas if r.retained}
    for name, obj in by_name.items():
        mine = obj["metadata"]["labels"][LABEL_DEPLOYMENT] == "model"
        if mine and _serving(obj) and name not in kept:
            # A serving replica leaves only for a reason that has nothing to do with capacity.
            reason = next(r.reason for r in decision.removed if r.name == name)
            assert "yielded" not in reason, reason


_FIT_NAMES = st.lists(st.sampled_from(CLUSTER_NAMES), min_size=1, max_size=4, unique=True)
_FIT_SHAPES = st.lists(st.sampled_from(["h100", "l4", "l40s"]), min_size=1, max_size=3, unique=True)
_FIT_NODES = st.integers(1, 3)
_FIT_OTHERS = st.integers(0, 4)
# What another deployment's replica may claim on one node of each shape.
_FIT_CLAIM = {
    shape: st.sampled_from([g for g in (1, 2, 4, 8) if g <= per_node])
    for shape, per_node in PER_NODE.items()
}
_FIT_GPUS = st.sampled_from([1, 1, 2, 4])
_FIT_REPLICAS = st.integers(1, 8)
_FIT_PIPELINE = st.sampled_from([1, 2])


@st.composite
def best_fit_scenarios(draw: st.DrawFn) -> tuple[Obj, list[Obj], list[Obj]]:
    """Unified deployments whose one request every pool matches, onto fleets of pools of
    different sizes, some already used by other deployments (which never yield: serving)."""
    names = draw(_FIT_NAMES)
    clusters: list[Obj] = []
    for name in names:
        chosen = draw(_FIT_SHAPES)
        clusters.append(
            cluster(name, *[pool(s, draw(_FIT_NODES), *POOL_SHAPES[s]) for s in chosen])
        )
    places = [(c["metadata"]["name"], p["name"]) for c in clusters for p in c["status"]["gpuPools"]]
    where_shape = st.sampled_from(places)
    others: list[Obj] = []
    for i in range(draw(_FIT_OTHERS)):
        where, shape = draw(where_shape)
        gpus = draw(_FIT_CLAIM[shape])
        others.append(
            replica(where, i, shape, claim("gpu", gpus), deployment_name="other", serving=True)
        )
    gpus = draw(_FIT_GPUS)
    dep = deployment(draw(_FIT_REPLICAS))
    dep["spec"].update(
        role(request("gpu", gpus, "true"), topology={"pipeline": draw(_FIT_PIPELINE)})
    )
    return dep, clusters, others


@settings(max_examples=200, deadline=None)
@given(scenario=best_fit_scenarios())
def test_best_fit_leaves_no_less_capable_pool_with_room(
    scenario: tuple[Obj, list[Obj], list[Obj]],
) -> None:
    """Pools only fill up while a decision places, so a pool less capable than one that
    got a new replica must have had no room by the end, or best fit was not followed."""
    dep, clusters, replicas = scenario
    decision = _decide(dep, clusters, replicas)
    nodes, usage = _usage(dep, clusters, replicas, decision)
    gpus = dep["spec"]["nodeSelector"]["devices"][0]["count"]
    pods = _pods(dep["spec"]["workers"], gpus)
    used = {PER_NODE[p.pool] for r in decision.replicas if r.new for p in r.roles}
    for key, count in nodes.items():
        per_node = PER_NODE[key[1]]
        if per_node < gpus or not used or per_node >= max(used):
            continue
        assert not _packs(usage[key] + pods, count, per_node), (key, usage[key], pods)
