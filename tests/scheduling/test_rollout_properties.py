"""Rollouts over generated fleets and edits, reconcile after reconcile.

A fleet at rest (every replica serving the current revision) gets an edit: a new
image, a clusterSelector or device selector that forces moves, a new replica
count, a strategy, or several at once. Each reconcile then feeds the decision back
as the next one's existing replicas, the way the render simulation does: a
replica the decision placed or updated is not serving at the next reconcile, and
serves from the one after. Every decision must hold the budget (at least
replicas - maxUnavailable serve, unless fewer already did: nothing but a scale
down takes a serving replica away beyond it), keep identities unique, and the
rollout must end: every replica on the current revision, or a condition saying
it is stalled.
"""

import copy
from dataclasses import dataclass, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.scheduling import (
    Cluster,
    Decision,
    Deployment,
    ExistingReplica,
    Origin,
    schedule,
)
from modelplane.scheduling.rollout import budget

from .builders import Obj, cluster, deployment, gpu, pool, read_clusters, read_dep, request
from .fake_engine import FakeEngine

SHAPES = {"h100": gpu(8, "Hopper", 80), "l40s": gpu(4, "Ada", 48)}
COUNT = st.one_of(st.integers(0, 3), st.sampled_from(["0%", "25%", "50%", "100%"]))


# The strategies the composites draw from, built once rather than on every draw (the
# same choices; a strategy's label hashes its elements, so they are the same elements).
_NAMES = st.lists(st.sampled_from("abcd"), min_size=1, max_size=4, unique=True)
_SHAPES = st.lists(st.sampled_from(sorted(SHAPES)), min_size=1, max_size=2, unique=True)
_NODES = st.integers(0, 4)
_TIER = st.sampled_from(["prod", "dev"])
_SELECTOR = st.sampled_from(["true", "arch == Hopper", "arch == Ada"])
_ANY_TIER = st.sampled_from([None, "prod", "dev"])
_START_REPLICAS = st.integers(1, 5)
_GPUS = st.sampled_from([4, 8])
_KINDS = st.lists(
    st.sampled_from(["image", "cluster", "devices", "replicas", "strategy"]),
    min_size=1,
    max_size=3,
    unique=True,
)
_EDITED_REPLICAS = st.integers(0, 6)


@st.composite
def fleets(draw: st.DrawFn) -> list[Obj]:
    clusters: list[Obj] = []
    for name in draw(_NAMES):
        shapes = draw(_SHAPES)
        pools = [pool(s, draw(_NODES), SHAPES[s]) for s in shapes]
        tier = draw(_TIER)
        clusters.append(cluster(name, *pools, labels={"tier": tier}))
    return clusters


def _strategy(unavailable: int | str, surge: int | str) -> Obj:
    if unavailable in (0, "0%") and surge in (0, "0%"):
        unavailable = 1  # rejected at admission
    return {"rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge}}


@st.composite
def starts(draw: st.DrawFn) -> Obj:
    selector = draw(_SELECTOR)
    tier = draw(_ANY_TIER)
    obj = deployment(
        draw(_START_REPLICAS),
        request("gpu", draw(_GPUS), selector),
        cluster_selector=None if tier is None else {"matchLabels": {"tier": tier}},
    )
    obj["spec"]["strategy"] = _strategy(draw(COUNT), draw(COUNT))
    return obj


@st.composite
def edits(draw: st.DrawFn, start: Obj) -> Obj:
    edited = copy.deepcopy(start)
    spec = edited["spec"]
    kinds = draw(_KINDS)
    if "image" in kinds:
        spec["workers"]["template"]["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v2"
    if "cluster" in kinds:
        tier = draw(_ANY_TIER)
        spec["clusterSelector"] = None if tier is None else {"matchLabels": {"tier": tier}}
        if tier is None:
            del spec["clusterSelector"]
    if "devices" in kinds:
        selector = draw(_SELECTOR)
        spec["nodeSelector"]["devices"][0]["selectors"] = [{"cel": selector}]
    if "replicas" in kinds:
        spec["replicas"] = draw(_EDITED_REPLICAS)
    if "strategy" in kinds:
        spec["strategy"] = _strategy(draw(COUNT), draw(COUNT))
    return edited


@dataclass
class World:
    """This deployment's replicas as the next reconcile reads them."""

    replicas: list[ExistingReplica]
    fresh: set[str]
    """Placed or updated by the last decision: not serving yet."""


def _existing(decision: Decision, before: World, deployment_: Deployment) -> World:
    previous = {r.name: r for r in before.replicas}
    replicas: list[ExistingReplica] = []
    fresh: set[str] = set()
    for desired in decision.replicas:
        old = previous.get(desired.name)
        kept_as_is = desired.origin in (Origin.PENDING, Origin.HELD) and old is not None
        changed = not kept_as_is and (
            old is None or desired.new or old.revision != deployment_.revision
        )
        if changed:
            fresh.add(desired.name)
        replicas.append(
            ExistingReplica(
                "ml",
                desired.name,
                "model",
                desired.cluster,
                desired.index,
                old.roles if kept_as_is and old is not None else desired.roles,
                serving=desired.name not in fresh,
                revision=old.revision if kept_as_is and old is not None else deployment_.revision,
            )
        )
    return World(replicas, fresh)


def _decide(deployment_: Deployment, clusters: list[Cluster], world: World) -> Decision:
    return schedule(deployment_, clusters, world.replicas, engine=FakeEngine(), priorities=None)


def _at_rest(deployment_: Deployment, clusters: list[Cluster]) -> World:
    world = World([], set())
    for _ in range(4):
        world = _existing(_decide(deployment_, clusters, world), world, deployment_)
    # Let everything placed serve.
    return World([replace(r, serving=True) for r in world.replicas], set())


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_rollout_holds_its_budget_and_ends(data: st.DataObject) -> None:
    clusters = read_clusters(data.draw(fleets()))
    start = data.draw(starts())
    _rolls_within_budget(clusters, read_dep(start), read_dep(data.draw(edits(start))))


def test_a_surge_does_not_leave_more_than_r_replicas_on_the_new_revision() -> None:
    """Found by the property above: an image bump on a fleet with one spare node and
    `maxSurge: 1`. Once a surge had made R replicas run the current revision, the last
    outdated one was still updated in place (R + 1 on it) instead of retired."""
    clusters = read_clusters(
        [
            cluster("a", pool("h100", 2, SHAPES["h100"])),
            cluster("b", pool("h100", 4, SHAPES["h100"])),
        ]
    )
    start = deployment(5, request("gpu", 8, "true"))
    start["spec"]["strategy"] = _strategy(1, 0)
    edited = copy.deepcopy(start)
    edited["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v2"
    edited["spec"]["strategy"] = _strategy(1, 1)
    _rolls_within_budget(clusters, read_dep(start), read_dep(edited))


def _rolls_within_budget(clusters: list[Cluster], start: Deployment, edited: Deployment) -> None:
    world = _at_rest(start, clusters)
    wanted = edited.replicas
    unavailable = budget(edited.strategy, wanted).unavailable
    surge = budget(edited.strategy, wanted).surge
    decision = None
    for _ in range(4 * max(wanted, len(world.replicas)) + 8):
        serving = {r.name for r in world.replicas if r.serving}
        decision = _decide(edited, clusters, world)
        names = [r.name for r in decision.replicas]
        assert len(set(names)) == len(names)
        assert len({(r.cluster, r.index) for r in decision.replicas}) == len(names)
        assert len(names) <= max(wanted + surge, 0) or not serving
        assert len([r for r in decision.replicas if r.origin is not Origin.PENDING]) <= wanted
        scaled = {r.name for r in decision.removed if r.reason.startswith("scaled down")}
        after = _existing(decision, world, edited)
        still = {r.name for r in after.replicas if r.name in serving and r.name not in after.fresh}
        assert len(still) >= min(len(serving - scaled), wanted - unavailable), (
            sorted(serving),
            sorted(still),
            decision.removed,
        )
        world = after
    assert decision is not None
    progress = decision.progress
    assert progress is not None and progress.type == ConditionType.PROGRESSING
    pending = [r for r in decision.replicas if r.origin is Origin.PENDING]
    if progress.status:
        assert not pending
        assert progress.reason in (Reason.ROLLOUT_COMPLETE, Reason.ROLLING_UPDATE)
    else:
        assert progress.reason == Reason.ROLLOUT_STALLED
    if progress.reason == Reason.ROLLOUT_COMPLETE:
        assert decision.updated == len(decision.replicas) >= wanted
        assert all(r.revision == edited.revision for r in world.replicas)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_a_fleet_at_rest_stays_at_rest(data: st.DataObject) -> None:
    """With no edit, nothing is updated, moved or removed, whatever the strategy."""
    clusters = read_clusters(data.draw(fleets()))
    start = read_dep(data.draw(starts()))
    world = _at_rest(start, clusters)
    decision = _decide(start, clusters, world)
    assert decision.removed == ()
    assert all(r.origin is Origin.RETAINED for r in decision.replicas)
    assert {r.name for r in decision.replicas} >= {r.name for r in world.replicas}
