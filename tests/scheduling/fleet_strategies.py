"""Hypothesis strategies for the scheduler's properties: generated fleets, deployments
and the replicas already placed on them (`scenarios`)."""

import copy

from hypothesis import strategies as st

from modelplane.scheduling import Priorities

from .builders import (
    Obj,
    claim,
    cluster,
    deployment,
    gpu,
    nic,
    pool,
    replica,
    request,
    role,
)

# Every generated pool has exactly one claimable kind (class gpu.nvidia.com), so the
# checker below can recompute usage without reimplementing the matcher.
POOL_SHAPES: dict[str, list[Obj]] = {
    "h100": [gpu(8, "Hopper", 80)],
    "l4": [gpu(1, "Ada", 24)],
    "l40s": [gpu(4, "Ada", 48)],
    "ib": [gpu(8, "Hopper", 80), nic(8)],
}
PER_NODE = {name: devices[0]["count"] for name, devices in POOL_SHAPES.items()}
CLUSTER_NAMES = ["a", "b", "c", "d", "e", "f"]
SELECTORS = ["arch == Hopper", "arch == Ada", "capacity.memory >= 40", "true"]
PRIORITIES = Priorities({"high": 1000, "low": 10, "batch": 1})
TIMES = [None, None, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]


# The strategies every example draws from are built once, here: a strategy built
# inside a composite is built and validated again on every draw (most of a draw's cost),
# while drawing from the same strategy object makes the same choices. (A strategy's
# label hashes its elements and steers hypothesis' mutations, so the elements are the
# ones drawn before; values a builder keeps by reference are copied per example.)
_NAMES = st.lists(st.sampled_from(CLUSTER_NAMES), min_size=0, max_size=5, unique=True)
_SHAPES = st.lists(st.sampled_from(sorted(POOL_SHAPES)), min_size=1, max_size=3, unique=True)
_NODES = st.integers(0, 4)
_ALLOWED = st.sampled_from([None, None, ["high"], ["high", "low"]])
_TIER = st.sampled_from(["prod", "prod", "dev"])


@st.composite
def fleets(draw: st.DrawFn) -> list[Obj]:
    names = draw(_NAMES)
    clusters: list[Obj] = []
    for name in names:
        shapes = draw(_SHAPES)
        pools = [pool(s, draw(_NODES), *POOL_SHAPES[s]) for s in shapes]
        allowed = draw(_ALLOWED)
        tier = draw(_TIER)
        clusters.append(
            cluster(
                name,
                *pools,
                labels={"tier": tier},
                allowed=copy.deepcopy(allowed),
            )
        )
    return clusters


_GPUS = st.sampled_from([1, 2, 4, 8])
_SELECTOR = st.sampled_from(SELECTORS)
_EXTRA = st.sampled_from(["none", "none", "fabric", "more"])
_FABRIC = st.sampled_from([1, 8])
_MORE = st.sampled_from([1, 2, 4])
_WORKERS = st.integers(1, 2)
_PIPELINE = st.sampled_from([1, 1, 2])


@st.composite
def roles(draw: st.DrawFn) -> Obj:
    gpus = draw(_GPUS)
    requests = [request("gpu", gpus, draw(_SELECTOR))]
    extra = draw(_EXTRA)
    if extra == "fabric":
        requests.append(request("fabric", draw(_FABRIC), "link == infiniband"))
    elif extra == "more":
        requests.append(request("more", draw(_MORE), "true"))
    return role(
        *requests,
        workers=draw(_WORKERS),
        topology={"pipeline": draw(_PIPELINE)},
    )


_ROLES = roles()
_REPLICAS = st.integers(0, 8)
_CLUSTER_SELECTOR = st.sampled_from([None, None, {"matchLabels": {"tier": "prod"}}])
_PRIORITY = st.sampled_from([None, None, "high", "low", "batch"])
_SPLIT = st.integers(0, 2)


@st.composite
def deployments(draw: st.DrawFn) -> Obj:
    replicas = draw(_REPLICAS)
    selector = copy.deepcopy(draw(_CLUSTER_SELECTOR))
    priority = draw(_PRIORITY)
    if draw(_SPLIT) == 0:
        return deployment(
            replicas,
            decode=draw(_ROLES),
            prefill=draw(_ROLES),
            cluster_selector=selector,
            priority=priority,
        )
    obj = deployment(replicas, cluster_selector=selector, priority=priority)
    obj["spec"].update(draw(_ROLES))
    return obj


_COUNT = st.integers(0, 8)
_MINE = st.booleans()
_CLAIMS = st.integers(1, 2)
_INDEX = st.integers(0, 3)
_REPLICA_PRIORITY = st.sampled_from([None, "high", "low", "batch"])
_SERVING = st.booleans()
_CREATED = st.sampled_from(TIMES)


@st.composite
def existing(draw: st.DrawFn, clusters: list[Obj]) -> list[Obj]:
    """Replicas of this deployment and of others, mostly on pools that exist."""
    places = [
        (c["metadata"]["name"], p["name"]) for c in clusters for p in c["status"]["gpuPools"]
    ] + [("gone", "h100")]
    replicas: list[Obj] = []
    where_shape = st.sampled_from(places)
    for i in range(draw(_COUNT)):
        mine = draw(_MINE)
        where, shape = draw(where_shape)
        claims = [claim("gpu", draw(_GPUS)) for _ in range(draw(_CLAIMS))]
        replicas.append(
            replica(
                where,
                draw(_INDEX),
                shape,
                *claims,
                deployment_name="model" if mine else f"other{i % 3}",
                name=f"r{i}",
                workers=draw(_WORKERS),
                priority=draw(_REPLICA_PRIORITY),
                serving=draw(_SERVING),
                created=draw(_CREATED),
            )
        )
    return replicas


_FLEETS = fleets()
_DEPLOYMENTS = deployments()


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Obj, list[Obj], list[Obj]]:
    clusters = draw(_FLEETS)
    return draw(_DEPLOYMENTS), clusters, draw(existing(clusters))
