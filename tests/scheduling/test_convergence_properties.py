"""Invariants over reconcile rounds: deployments decide concurrently from one snapshot
of the fleet, the in-cluster scheduler runs what fits, clusters are drained or fail.

- After the fleet converges, no pool's devices are overcommitted.
- A serving replica is removed only by a scale down, its cluster's deletion, or once
  enough of its deployment's other replicas serve (make-before-break).
"""

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.scheduling import Decision

from .builders import Obj, claim, cluster, deployment, h100, replica, request, run
from .simulated_fleet import HOPPER, Placed, fits, kube

CLUSTERS = ("a", "b", "c")
ROUNDS = 12


@dataclass
class World:
    clusters: dict[str, Obj]
    wanted: dict[str, tuple[int, int]]
    """deployment -> (replicas, GPUs per replica)."""
    placed: dict[str, Placed] = field(default_factory=dict[str, Placed])

    def objects(self) -> list[Obj]:
        return [
            replica(
                p.cluster,
                p.index,
                "h100",
                claim("gpu", p.gpus, HOPPER),
                deployment_name=p.deployment,
                namespace=p.deployment,
                name=name,
                serving=p.serving,
                created=f"2026-01-01T00:00:{p.round:02d}Z",
            )
            for name, p in sorted(self.placed.items())
        ]

    def nodes(self, name: str) -> int:
        return self.clusters[name]["status"]["gpuPools"][0]["nodes"]


def _dep(name: str, wanted: tuple[int, int]) -> Obj:
    return deployment(wanted[0], request("gpu", wanted[1], HOPPER), name=name, namespace=name)


def _apply(world: World, decisions: dict[str, Decision], round_: int) -> None:
    for dep, decision in decisions.items():
        mine = {n for n, p in world.placed.items() if p.deployment == dep}
        kept = {r.name for r in decision.replicas}
        for gone in mine - kept:
            del world.placed[gone]
        for r in decision.replicas:
            if r.name not in world.placed:
                gpus = world.wanted[dep][1]
                world.placed[r.name] = Placed(dep, r.cluster, r.index, gpus, round=round_)


def _round(world: World, round_: int, check: list[str]) -> bool:
    """One round: every deployment decides from the same snapshot; True when nothing changed."""
    objects = world.objects()
    clusters = list(world.clusters.values())
    decisions = {dep: run(_dep(dep, w), clusters, objects) for dep, w in world.wanted.items()}
    serving = {n for n, p in world.placed.items() if p.serving}
    for dep, decision in decisions.items():
        wanted = world.wanted[dep][0]
        before = sum(1 for n in serving if world.placed[n].deployment == dep)
        after = sum(1 for r in decision.replicas if r.name in serving)
        for removed in decision.removed:
            if removed.name not in serving:
                continue
            allowed = ("scaled down", "cluster no longer exists")
            if any(words in removed.reason for words in allowed):
                continue
            if "replacement serves" in removed.reason and after >= min(wanted, before):
                continue
            check.append(f"round {round_}: {removed.name} removed while serving: {removed.reason}")
    before_state = {n: (p.cluster, p.index) for n, p in world.placed.items()}
    _apply(world, decisions, round_)
    kube(world)
    return before_state == {n: (p.cluster, p.index) for n, p in world.placed.items()}


@st.composite
def worlds(draw: st.DrawFn) -> tuple[World, dict[str, Obj]]:
    """A fleet, two deployments, and the clusters as they become after the fleet settled
    (tainted, unreachable, or as they were)."""
    clusters = {name: cluster(name, h100(draw(st.integers(1, 3)))) for name in CLUSTERS}
    wanted = {dep: (draw(st.integers(0, 3)), draw(st.sampled_from([4, 8]))) for dep in ("x", "y")}
    changed: dict[str, Obj] = {}
    for name in CLUSTERS:
        nodes = clusters[name]["status"]["gpuPools"][0]["nodes"]
        change = draw(st.sampled_from(["none", "none", "NoSchedule", "NoExecute", "unreachable"]))
        taints = [{"key": "drain", "effect": change}] if change.startswith("No") else None
        changed[name] = cluster(
            name, h100(nodes), taints=taints, reachable=False if change == "unreachable" else None
        )
    return World(clusters, wanted), changed


@settings(max_examples=60, deadline=None)
@given(scenario=worlds())
def test_racing_and_draining_converge_without_overcommit_or_dropping_what_serves(
    scenario: tuple[World, dict[str, Obj]],
) -> None:
    world, changed = scenario
    problems: list[str] = []
    round_ = 0
    for phase in (world.clusters, changed):
        world.clusters = phase
        for _ in range(ROUNDS):
            round_ += 1
            if _round(world, round_, problems):
                break
        else:
            raise AssertionError(f"no convergence within {ROUNDS} rounds: {world.placed}")
    assert problems == []
    for name in world.clusters:
        gpus = [p.gpus for p in world.placed.values() if p.cluster == name]
        assert fits(gpus, world.nodes(name)), (name, gpus)
