"""The safety argument of the settled path (compose_model_deployment.settled).

A deployment, spread over clusters or not, its weights in a model cache or not, is
placed over a random fleet and its replicas serve or still load; then the world
changes at random (a cluster drained, deleted, shrunk, relabelled or unreachable,
its in-cluster queue full or not, its cache storage gone or the cache Ready on it;
another deployment's higher-priority replica on one of its clusters; a scale; a
template change; a replica that stops serving; or nothing), and reconciles over
the fleet may carry the change on (a rollout in flight). One reconcile's fetch loop is
run as Crossplane runs it, answered from that world, once by the function as it is
and once with the settled path turned off (the whole fleet always). Whenever the
narrow path keeps everything, the wide decision keeps the same replicas on the same
clusters and pools with the same status apart from the carried match trace; and
whenever they would differ, the narrow path has widened and decided as the wide one.
"""

import copy
from typing import Any

import pytest
from compose_model_deployment import fn
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.xfn.structs import to_struct
from modelplane_cli.render import requirements as render_requirements
from modelplane_cli.render.world import World
from modelplane_dev.testing import as_dict, run

from .objects import CACHE_STORAGE, as_running, cluster, deployment, model_cache

DRAIN = {"key": "example.com/maintenance", "value": "2026-12-01", "effect": "NoExecute"}
HIGH = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000000,
}
TRACE = ("matchTrace", "matchTraceOmitted", "matchTraceSpec")
CHANGES = [
    "none",
    "drain",
    "delete",
    "shrink",
    "relabel",
    "preempt",
    "race",
    "scale",
    "template",
    "stop",
    "unreachable",
    "queue",
    "unstored",
    "warm",
]
UNREACHABLE = {"type": "Reachable", "status": "False", "reason": "ClusterUnreachable"}
# Spread over clusters, one replica apart at the most: kept where it runs (the scheduler
# never rebalances), placed under it.
SPREADS = [
    None,
    {"topologyKey": "modelplane.ai/cluster", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"},
    {"topologyKey": "modelplane.ai/cluster", "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"},
]


def fetch_loop(
    world: list[dict[str, Any]],
    composite: dict[str, Any],
    observed: dict[str, dict[str, Any]],
) -> tuple[dict[str, Any], int]:
    """The last response of one reconcile's fetch loop, run as Crossplane v2.3 runs it
    (internal/xfn/required_resources.go), and how many calls it took. Crossplane makes
    six calls at the most (one and five re-calls); this allows five, and the function
    needs four."""
    answered = World(world)
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(to_struct(composite))
    for key, obj in observed.items():
        req.observed.resources[key].resource.CopyFrom(to_struct(obj))
    previous = None
    runner = FunctionRunner()
    for calls in range(1, 6):
        rsp = run(runner, req)
        asked = rsp.requirements.SerializeToString(deterministic=True)
        if asked == previous:
            return as_dict(rsp), calls
        previous = asked
        req.ClearField("required_resources")
        for name, selector in rsp.requirements.resources.items():
            req.required_resources[name].ParseFromString(
                render_requirements.fetch(answered, selector)
            )
    raise AssertionError("requirements did not settle in 5 calls")


SERVES = {"conditions": [{"type": "Serving", "status": "True"}]}


def serving(obj: dict[str, Any]) -> dict[str, Any]:
    running = as_running(obj)
    running["status"] = copy.deepcopy(SERVES)
    return running


def other(name: str, cluster_name: str, *, priority: str | None, serves: bool) -> dict[str, Any]:
    """A replica of another deployment holding one node of `cluster_name`."""
    spec: dict[str, Any] = {
        "clusterName": cluster_name,
        "deploymentName": "other",
        "index": 0,
        "workers": {
            "count": 1,
            "deviceRequests": [{"count": 8, "deviceClassName": "gpu.nvidia.com", "name": "gpu"}],
            "nodePoolName": "h100",
            "template": {"spec": {"containers": [{"name": "engine", "image": "x"}]}},
            "topology": {"data": 1, "dataLocal": 1, "pipeline": 2, "tensor": 8},
        },
    }
    if priority:
        spec["priority"] = priority
    obj: dict[str, Any] = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": name,
            "namespace": "team",
            "labels": {"modelplane.ai/cluster": cluster_name, "modelplane.ai/deployment": "other"},
        },
        "spec": spec,
    }
    if serves:
        obj["status"] = {"conditions": [{"type": "Serving", "status": "True"}]}
    return obj


def without(rsp: dict[str, Any], trace: bool) -> dict[str, Any]:
    """The response apart from its requirements (and, with `trace`, the match trace)."""
    got = copy.deepcopy(rsp)
    got.pop("requirements", None)
    status = got.get("desired", {}).get("composite", {}).get("resource", {}).get("status", {})
    if trace:
        for key in TRACE:
            status.pop(key, None)
    return got


def loading(obj: dict[str, Any]) -> dict[str, Any]:
    """A composed replica that exists but does not serve yet (its model loading)."""
    running = as_running(obj)
    running["status"] = {"conditions": [{"type": "Serving", "status": "False"}]}
    return running


def settled_world(
    nodes: list[int],
    wanted: int,
    loaded: bool = True,
    strategy: dict[str, Any] | None = None,
    spread: dict[str, Any] | None = None,
    cached: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, dict[str, Any]]]:
    """A fleet with the deployment (rolled out by `strategy`, spread by `spread`, its
    weights in a ModelCache Ready on c0 when `cached`, every cluster able to hold it)
    placed by a wide decision, every replica serving (`loaded`) or none yet."""
    clusters = [cluster(f"c{i}", n) for i, n in enumerate(nodes)]
    composite = deployment(wanted)
    caches: list[dict[str, Any]] = []
    if cached:
        composite["spec"]["model"] = {"cacheRef": {"name": "weights"}}
        for obj in clusters:
            obj["spec"]["storage"] = CACHE_STORAGE
        caches.append(model_cache(["c0"]))
    if strategy is not None:
        composite["spec"]["strategy"] = strategy
    if spread is not None:
        composite["spec"]["placement"] = {"spreadConstraints": [spread]}
    composite["status"] = {"matchTrace": []}
    first, _ = fetch_loop([*clusters, HIGH, *caches], composite, {})
    placed = first.get("desired", {}).get("resources", {})
    state = serving if loaded else loading
    observed = {key: state(body["resource"]) for key, body in placed.items()}
    trace = first["desired"]["composite"]["resource"]["status"]
    composite["status"] = {k: trace[k] for k in TRACE if k in trace}
    return [*clusters, HIGH, *caches, *observed.values()], composite, observed


def changed(
    world: list[dict[str, Any]],
    composite: dict[str, Any],
    observed: dict[str, dict[str, Any]],
    change: str,
    pick: int,
    serves: bool,
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, dict[str, Any]]]:
    world, composite, observed = copy.deepcopy((world, composite, observed))
    clusters = [o for o in world if o["kind"] == "InferenceCluster"]
    target = clusters[pick % len(clusters)]
    name = target["metadata"]["name"]
    if change == "drain":
        target["spec"]["taints"] = [DRAIN]
    elif change == "delete":
        world.remove(target)
    elif change == "shrink":
        target["spec"]["nodePools"][0]["nodeCount"] = 0
        target["status"]["gpuPools"][0]["nodes"] = 0
    elif change == "relabel":
        target["metadata"]["labels"] = {"tier": "staging"}
    elif change == "preempt":
        target["spec"]["scheduling"] = {"preemption": "LowerPriority"}
        world.append(other(f"other-{name}", name, priority="high", serves=serves))
    elif change == "race":
        # Placed on the same pool at the same moment by a deployment that precedes
        # (higher priority, no preemption): the pool holds more than it can.
        world.append(other(f"race-{name}", name, priority="high", serves=serves))
    elif change == "scale":
        composite["spec"]["replicas"] += 1 if serves else -1
    elif change == "template":
        composite["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] = "vllm:next"
    elif change == "unreachable":
        target["status"]["conditions"] = [UNREACHABLE]
    elif change == "unstored":
        # It can no longer hold the deployment's model cache (when it has one).
        target["spec"].pop("storage", None)
    elif change == "warm":
        # The cache is Ready on it too (when the deployment has one).
        for obj in world:
            if obj["kind"] == "ModelCache":
                obj["status"]["clusters"].append({"name": name, "phase": "Ready"})
    elif change == "queue":
        # The namespace's in-cluster queue there: full, or room for one replica more.
        gpu = {"quota": 16, "used": 16 if serves else 8}
        queue = {"name": "ml", "provider": "KAI", "namespaces": ["ml"], "gpu": gpu}
        target["status"]["capacity"] = {"queues": [queue]}
    elif change == "stop" and observed:
        key = sorted(observed)[pick % len(observed)]
        observed[key]["status"] = {"conditions": [{"type": "Serving", "status": "False"}]}
    return world, composite, observed


def advanced(
    world: list[dict[str, Any]],
    composite: dict[str, Any],
    observed: dict[str, dict[str, Any]],
    serve: bool,
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, dict[str, Any]]]:
    """The world after one reconcile over the whole fleet is applied: what it composed
    exists, a replica it left unchanged that served serves on, and any other (new,
    changed, or loading before) serves if `serve` (its model loaded by the next
    reconcile) and is loading otherwise; the composite carries the status it published
    (a retirement's record included)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fn, "settled_clusters", lambda *_: None)
        rsp, _ = fetch_loop(world, composite, observed)
    desired = rsp.get("desired", {})
    composite = {
        **composite,
        "status": desired.get("composite", {}).get("resource", {}).get("status", {}),
    }
    now: dict[str, dict[str, Any]] = {}
    for key, body in desired.get("resources", {}).items():
        before = observed.get(key)
        obj = as_running(body["resource"])
        unchanged = before is not None and before.get("spec") == obj.get("spec")
        obj["status"] = before.get("status", {}) if before is not None and unchanged else {}
        if obj["kind"] == "ModelReplica" and not (unchanged and obj["status"] == SERVES):
            obj["status"] = {"conditions": [{"type": "Serving", "status": str(serve)}]}
        now[key] = obj
    mine = {id(o) for o in observed.values()}
    world = [o for o in world if id(o) not in mine] + list(now.values())
    return world, composite, now


STRATEGIES = [
    None,  # maxSurge and maxUnavailable 25%: a surge, no replica unavailable
    {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},  # in place, one at a time
    {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
]


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    wanted=st.integers(0, 3),
    others=st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=3),
    change=st.sampled_from(CHANGES),
    pick=st.integers(0, 7),
    serves=st.booleans(),
    loaded=st.booleans(),
    strategy=st.sampled_from(STRATEGIES),
    spread=st.sampled_from(SPREADS),
    cached=st.booleans(),
    steps=st.lists(st.booleans(), max_size=2),
)
def test_the_narrow_path_decides_as_the_whole_fleet(
    nodes: list[int],
    wanted: int,
    others: list[tuple[int, bool]],
    change: str,
    pick: int,
    serves: bool,
    loaded: bool,
    strategy: dict[str, Any] | None,
    spread: dict[str, Any] | None,
    cached: bool,
    steps: list[bool],
) -> None:
    world, composite, observed = settled_world(nodes, wanted, loaded, strategy, spread, cached)
    for i, (at, others_serve) in enumerate(others):
        world.append(other(f"low-{i}", f"c{at % len(nodes)}", priority=None, serves=others_serve))
    world, composite, observed = changed(world, composite, observed, change, pick, serves)
    # A change in flight: reconciles over the fleet applied, each replica they place or
    # update loading or serving by then (a rollout waiting for its surge, say).
    for serve in steps:
        world, composite, observed = advanced(world, composite, observed, serve)
    decides_as_the_whole_fleet(world, composite, observed)


def decides_as_the_whole_fleet(
    world: list[dict[str, Any]], composite: dict[str, Any], observed: dict[str, dict[str, Any]]
) -> bool:
    """One reconcile with the settled path and one without answer alike; whether the
    first stayed narrow."""
    narrow, _ = fetch_loop(world, composite, observed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fn, "settled_clusters", lambda *_: None)
        wide, _ = fetch_loop(world, composite, observed)

    kept_narrow = "inferenceclusters" not in narrow.get("requirements", {}).get("resources", {})
    # Kept on the narrow path: the same answer as over the whole fleet, the trace
    # aside (carried forward). Widened: exactly the wide answer, trace included.
    assert without(narrow, kept_narrow) == without(wide, kept_narrow)
    return kept_narrow


@pytest.mark.parametrize("loaded", [True, False], ids=["serving", "loading"])
@pytest.mark.parametrize(
    "change", ["none", "stop", "drain", "preempt", "race", "scale", "template"]
)
def test_the_narrow_path_is_taken_only_when_nothing_changes(change: str, loaded: bool) -> None:
    """The properties above are not vacuous: a settled deployment with nothing changed
    keeps on the narrow path in two calls, whether its replicas serve or are still
    loading (a replica that stops serving changes nothing the fleet decides); each
    other change widens (one call more for the fleet, one for the lists of its
    clusters' replicas). A loading replica yields to a racing one that precedes it,
    which a replica already serving does not. A spec edit (a template, a scale)
    decides over the fleet once, for a match trace of the spec as it now is."""
    world, composite, observed = settled_world([2, 2], 2, loaded)
    racing = change in ("preempt", "race")
    world, composite, observed = changed(world, composite, observed, change, 0, not racing)
    got, calls = fetch_loop(world, composite, observed)
    narrow = change in ("none", "stop") or (change, loaded) == ("race", True)
    assert_narrow(got, calls) if narrow else assert_wide(got, calls)


def assert_narrow(got: dict[str, Any], calls: int) -> None:
    asked = got["requirements"]["resources"]
    assert "inferenceclusters" not in asked
    assert sorted(asked) == [
        "inferenceclusters/c0",
        "modelreplicas/c0",
        "priorityclasses",
    ] or sorted(asked) == [
        "inferenceclusters/c0",
        "inferenceclusters/c1",
        "modelreplicas/c0",
        "modelreplicas/c1",
        "priorityclasses",
    ]
    assert calls == 2


def assert_wide(got: dict[str, Any], calls: int) -> None:
    assert "inferenceclusters" in got["requirements"]["resources"]
    assert calls <= 5
