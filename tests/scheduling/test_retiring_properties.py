"""Rollouts with break after unroute, over generated fleets and edits.

As `test_rollout_properties`, reconcile after reconcile, except that a serving
replica a decision removes does not vanish: it retires (the glue's
`compose_model_deployment.retiring`), still running and holding its devices for
one to three more reconciles, read as `adapt.existing_replicas` reads a retiring
replica: no longer the deployment's, charged as another's. Every decision must
still hold the rollout budget over the replicas that are routed (a retiring one
is not), keep identities unique, never place onto devices a retiring replica
holds, and end.
"""

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models import ModelReplica

from modelplane.core.issues import parse_object
from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.scheduling import Cluster, Decision, Deployment, ExistingReplica, schedule
from modelplane.scheduling.adapt import existing_replicas
from modelplane.scheduling.rollout import budget

from .builders import Obj, cluster, deployment, pool, read_clusters, read_dep, request
from .fake_engine import FakeEngine
from .test_rollout_properties import SHAPES, World, _at_rest, _existing, edits, fleets, starts

_HOLD = st.integers(1, 3)


@dataclass
class Retiring:
    replica: ExistingReplica
    left: int
    """Reconciles it still runs for."""


def _decide(
    deployment_: Deployment, clusters: list[Cluster], world: World, retiring: list[Retiring]
) -> Decision:
    return schedule(
        deployment_,
        clusters,
        [*world.replicas, *(r.replica for r in retiring)],
        engine=FakeEngine(),
        priorities=None,
    )


def _fits(decision: Decision, retiring: list[Retiring], gpus: int, clusters: list[Cluster]) -> bool:
    """Every pool holds what runs on it: the decision's replicas and the retiring ones,
    each taking `gpus` devices of one node."""
    per_node = {shape: SHAPES[shape]["count"] for shape in SHAPES}
    nodes = {(c.name, p.name): p.nodes for c in clusters for p in c.pools}
    used = Counter((r.cluster, r.roles[0].pool) for r in decision.replicas)
    used.update((r.replica.cluster, r.replica.roles[0].pool) for r in retiring)
    return all(
        count <= nodes.get(key, 0) * (per_node[key[1]] // gpus) for key, count in used.items()
    )


def _roll(clusters: list[Cluster], start: Obj, edit: Obj, hold: Callable[[], int]) -> int:
    """Roll `start` to `edit` over `clusters`, checking every decision; a removed serving
    replica retires for `hold()` reconciles. How many decisions met a retiring replica."""
    gpus = start["spec"]["nodeSelector"]["devices"][0]["count"]
    world = _at_rest(read_dep(start), clusters)
    edited = read_dep(edit)
    wanted = edited.replicas
    unavailable = budget(edited.strategy, wanted).unavailable
    retiring: list[Retiring] = []
    decision = None
    met = 0
    for _ in range(6 * max(wanted, len(world.replicas)) + 12):
        met += bool(retiring)
        serving = {r.name for r in world.replicas if r.serving}
        decision = _decide(edited, clusters, world, retiring)
        names = [r.name for r in decision.replicas]
        assert len(set(names)) == len(names)
        assert _fits(decision, retiring, gpus, clusters), (decision.replicas, retiring)
        scaled = {r.name for r in decision.removed if r.reason.startswith("scaled down")}
        after = _existing(decision, world, edited)
        still = {r.name for r in after.replicas if r.name in serving and r.name not in after.fresh}
        # Routed replicas only: a retiring one is not among them.
        assert len(still) >= min(len(serving - scaled), wanted - unavailable)
        wanted_again = set(names)
        retiring = [
            replace(r, left=r.left - 1)
            for r in retiring
            if r.left > 1 and r.replica.name not in wanted_again
        ]
        previous = {r.name: r for r in world.replicas}
        for removed in decision.removed:
            old = previous.get(removed.name)
            if old is not None and old.serving and removed.name not in wanted_again:
                retiring.append(Retiring(replace(old, owner=None), hold()))
        world = after
    assert decision is not None
    assert decision.progress is not None and decision.progress.type == ConditionType.PROGRESSING
    assert decision.progress.reason == Reason.ROLLOUT_COMPLETE or not retiring
    return met


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_rollout_with_retiring_replicas_holds_its_budget_and_its_devices(
    data: st.DataObject,
) -> None:
    clusters = read_clusters(data.draw(fleets()))
    start = data.draw(starts())
    _roll(clusters, start, data.draw(edits(start)), lambda: data.draw(_HOLD))


def test_a_surge_waits_for_the_devices_a_retiring_replica_holds() -> None:
    """Four replicas on five nodes, one surge, none unavailable: each retired replica
    holds its node while it retires, so the next surge waits for it instead of
    landing on its devices."""
    clusters = read_clusters([cluster("a", pool("h100", 5, SHAPES["h100"]))])
    start = deployment(4, request("gpu", 8, "true"))
    start["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    edit = copy.deepcopy(start)
    edit["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v2"
    assert _roll(clusters, start, edit, lambda: 2) >= 4


def test_a_retiring_replica_is_read_as_another_deployments() -> None:
    """`existing_replicas` with `retiring`: the replica is charged, not the deployment's."""
    body = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "m-1", "namespace": "ml"},
        "spec": {
            "clusterName": "a",
            "deploymentName": "model",
            "index": 1,
            "workers": {
                "count": 1,
                "nodePoolName": "h100",
                "deviceRequests": [],
                "template": {},
            },
        },
    }
    deployment_ = read_dep(deployment(1, request("gpu", 8, "true")))
    composed = {"m-1": parse_object(ModelReplica, body)}
    kept = existing_replicas(deployment_, None, composed, [])
    assert [r.owner for r in kept.replicas] == [deployment_.name]
    retired = existing_replicas(deployment_, None, composed, [], retiring={"m-1"})
    assert [(r.name, r.owner, r.cluster) for r in retired.replicas] == [("m-1", None, "a")]
