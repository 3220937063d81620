"""Invariants of placement policy: spread constraints and preemption.

- Under DoNotSchedule, no domain ever holds more than maxSkew replicas beyond the
  emptiest, whatever the fleet and however the deployment scales up and down, and no
  replica lands on a cluster without the topology key.
- Deployments racing from one snapshot (`--concurrent`) on clusters that allow
  preemption: a replica is only ever preempted by one of strictly higher priority
  whose class may preempt, the fleet converges, and once it has no pool is
  overcommitted.
"""

from collections import Counter
from dataclasses import dataclass, field

from hypothesis import event, given, settings
from hypothesis import strategies as st

from modelplane.scheduling import Decision, Priorities

from .builders import Obj, claim, cluster, deployment, h100, replica, request, run
from .simulated_fleet import HOPPER, Placed, fits, kube

NAMESPACE = "ml"

# --- spread -----------------------------------------------------------------------------


# The strategies the composites draw from, built once rather than on every draw (the
# same choices; a strategy's label hashes its elements, so they are the same elements).
_NODES = st.integers(0, 3)
_REGION = st.sampled_from(["r1", "r2", "r3", None])
_CLUSTERS = st.integers(1, 6)
_KEY = st.sampled_from(["region", "modelplane.ai/cluster"])
_SKEW = st.integers(1, 2)
_STEPS = st.lists(st.integers(0, 10), min_size=1, max_size=4)


@st.composite
def spread_worlds(draw: st.DrawFn) -> tuple[list[Obj], Obj, list[int]]:
    clusters = [
        cluster(
            f"c{i}",
            h100(draw(_NODES)),
            labels={} if (region := draw(_REGION)) is None else {"region": region},
        )
        for i in range(draw(_CLUSTERS))
    ]
    key = draw(_KEY)
    constraint = {
        "topologyKey": key,
        "maxSkew": draw(_SKEW),
        "whenUnsatisfiable": "DoNotSchedule",
    }
    steps = draw(_STEPS)
    return clusters, constraint, steps


def _domain(obj: Obj, key: str) -> str | None:
    if key == "modelplane.ai/cluster":
        return obj["metadata"]["name"]
    return obj["metadata"]["labels"].get(key)


@settings(max_examples=80, deadline=None)
@given(world=spread_worlds())
def test_do_not_schedule_spread_is_never_violated(world: tuple[list[Obj], Obj, list[int]]) -> None:
    clusters, constraint, steps = world
    key, skew = constraint["topologyKey"], constraint["maxSkew"]
    by_name = {c["metadata"]["name"]: c for c in clusters}
    domains = {d for c in clusters if (d := _domain(c, key)) is not None}
    existing: list[Obj] = []
    for replicas in steps:
        decision = run(deployment(replicas, spread=[constraint]), clusters, existing)
        counts = Counter(dict.fromkeys(domains, 0))
        for placed in decision.replicas:
            domain = _domain(by_name[placed.cluster], key)
            assert domain is not None, f"{placed.cluster} has no {key} label"
            counts[domain] += 1
        if counts:
            assert max(counts.values()) - min(counts.values()) <= skew, counts
        existing = [
            replica(r.cluster, r.index, "h100", name=r.name, serving=True)
            for r in decision.replicas
        ]


# --- preemption ---------------------------------------------------------------------------

PRIORITIES = Priorities(
    {"batch": 10, "standard": 100, "critical": 1000, "polite": 1000},
    never_preempt=frozenset({"polite"}),
)
CLASSES = ("batch", "standard", "critical", "polite")
ROUNDS = 14


@dataclass
class World:
    clusters: dict[str, Obj]
    wanted: dict[str, tuple[int, int, str]]
    """deployment -> (replicas, GPUs per replica, priority class)."""
    placed: dict[str, Placed] = field(default_factory=dict[str, Placed])

    def objects(self) -> list[Obj]:
        return [
            replica(
                p.cluster,
                p.index,
                "h100",
                claim("gpu", p.gpus, HOPPER),
                deployment_name=p.deployment,
                namespace=NAMESPACE,
                name=name,
                serving=p.serving,
                priority=self.wanted[p.deployment][2],
                created=f"2026-01-01T00:00:{p.round:02d}Z",
            )
            for name, p in sorted(self.placed.items())
        ]

    def nodes(self, name: str) -> int:
        return self.clusters[name]["status"]["gpuPools"][0]["nodes"]


def _check_preemptions(world: World, dep: str, decision: Decision, problems: list[str]) -> None:
    value = PRIORITIES.value(world.wanted[dep][2])
    owner_of = {
        f"replica {n} of ModelDeployment {p.deployment}": p for n, p in world.placed.items()
    }
    for placed in decision.replicas:
        if placed.preempts:
            event("a replica preempts")
        if placed.preempts and world.wanted[dep][2] in PRIORITIES.never_preempt:
            problems.append(f"{dep} ({world.wanted[dep][2]}) preempts {placed.preempts}")
        for victim in placed.preempts:
            holder = owner_of[victim]
            if PRIORITIES.value(world.wanted[holder.deployment][2]) >= value:
                problems.append(f"{dep} preempts {victim} of equal or higher priority")
            if not world.clusters[placed.cluster]["spec"]["scheduling"].get("preemption"):
                problems.append(f"{dep} preempts on {placed.cluster}, which does not allow it")
    for removed in decision.removed:
        if removed.preempted_by is None:
            continue
        by = owner_of[removed.preempted_by]
        if PRIORITIES.value(world.wanted[by.deployment][2]) <= value:
            problems.append(f"{removed.name} of {dep} preempted by {removed.preempted_by}")


def _round(world: World, round_: int, problems: list[str]) -> bool:
    """Every deployment decides from the same snapshot; True when nothing changed."""
    objects = world.objects()
    clusters = list(world.clusters.values())
    decisions = {
        dep: run(
            deployment(w[0], request("gpu", w[1], HOPPER), name=dep, priority=w[2]),
            clusters,
            objects,
            priorities=PRIORITIES,
        )
        for dep, w in world.wanted.items()
    }
    for dep, decision in decisions.items():
        _check_preemptions(world, dep, decision, problems)
    before = {n: (p.cluster, p.index) for n, p in world.placed.items()}
    for dep, decision in decisions.items():
        mine = {n for n, p in world.placed.items() if p.deployment == dep}
        for gone in mine - {r.name for r in decision.replicas}:
            del world.placed[gone]
        for r in decision.replicas:
            if r.name not in world.placed:
                gpus = world.wanted[dep][1]
                world.placed[r.name] = Placed(dep, r.cluster, r.index, gpus, round=round_)
    kube(world)
    return before == {n: (p.cluster, p.index) for n, p in world.placed.items()}


_ALLOW = st.sampled_from([True, True, True, False])
_H100_NODES = st.integers(1, 2)
_SETTLED = st.integers(0, 3)
_GPUS = st.sampled_from([4, 8])
_CLASS = st.sampled_from(CLASSES)
# How many each deployment asks for later: at least what it had (0-3), at most 4.
_LATER = {least: st.integers(least, 4) for least in range(4)}


@st.composite
def preemption_worlds(draw: st.DrawFn) -> tuple[World, dict[str, tuple[int, int, str]]]:
    """A fleet, three deployments settled at first, then asking for more at once."""
    clusters: dict[str, Obj] = {}
    for name in ("a", "b"):
        allow = draw(_ALLOW)
        clusters[name] = cluster(
            name,
            h100(draw(_H100_NODES)),
            preemption="LowerPriority" if allow else "Never",
        )
    first = {
        dep: (
            draw(_SETTLED),
            draw(_GPUS),
            draw(_CLASS),
        )
        for dep in ("x", "y", "z")
    }
    later = {dep: (draw(_LATER[w[0]]), w[1], w[2]) for dep, w in first.items()}
    return World(clusters, first), later


@settings(max_examples=50, deadline=None)
@given(scenario=preemption_worlds())
def test_preemption_respects_priority_converges_and_never_overcommits(
    scenario: tuple[World, dict[str, tuple[int, int, str]]],
) -> None:
    world, later = scenario
    problems: list[str] = []
    round_ = 0
    for wanted in (world.wanted, later):
        world.wanted = wanted
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
