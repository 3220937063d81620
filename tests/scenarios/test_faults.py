"""`render --faults`: every example fleet keeps its invariants under injected failures,
and a rule removed from the fleet scheduler is caught.

Each example set renders with `--faults SEED` for a range of seeds (the full 200
seeds of each set are `modelplane bench faults`, recorded in docs/performance.md).
The broken rule is make-before-break: a serving replica that must move (its
cluster unreachable, past the grace) is kept until its replacement serves.
"""

from dataclasses import dataclass
from typing import Any

import pytest

from modelplane.scheduling import retain
from modelplane.scheduling.moves import must_move
from modelplane_cli.render import RenderResult, read_documents, render
from modelplane_cli.render.faults import FAULT_ROUNDS, Faults
from modelplane_cli.render.invariants import SERVING_KEPT, Violation
from modelplane_dev.bench_faults import EXAMPLE_SETS

from .cli import EXAMPLES, Run, modelplane, rendered
from .fleets import Renderer

SEEDS = range(10)
# Seeds of the main fleet whose faults include an outage of a cluster serving kimi-k2.
CAUGHT_WITHIN = range(12)


def faulted(renderer: Renderer, name: str, seed: int) -> RenderResult:
    """`render --faults SEED` of an example set, in-process."""
    documents = read_documents([str(EXAMPLES / p) for p in EXAMPLE_SETS[name]])
    return render(
        documents,
        renderer.apis,
        renderer.registry,
        renderer.admission,
        in_process=True,
        faults=Faults(seed),
    )


# The faulted render two tests read (the determinism test renders it once more).
SAME_SEED = ("fleet", 4)
_KEPT: dict[tuple[str, int], RenderResult] = {}


def kept(renderer: Renderer, name: str, seed: int) -> RenderResult:
    """`faulted(renderer, name, seed)`; SAME_SEED's rendered once per process and kept
    (its readers never change a RenderResult), the others not kept."""
    if (name, seed) != SAME_SEED:
        return faulted(renderer, name, seed)
    if SAME_SEED not in _KEPT:
        _KEPT[SAME_SEED] = faulted(renderer, name, seed)
    return _KEPT[SAME_SEED]


@pytest.mark.parametrize("name", sorted(EXAMPLE_SETS))
def test_every_example_keeps_its_invariants_under_faults(renderer: Renderer, name: str) -> None:
    injected = 0
    for seed in SEEDS:
        result = kept(renderer, name, seed)
        assert result.ok, (seed, result.errors)
        assert result.converged and result.rounds > FAULT_ROUNDS
        injected += len(result.faults)
    assert injected >= len(SEEDS)  # the faults did happen


# Seeds `bench faults` found where a serving replica lost its route because its own
# reconcile failed (Crossplane writes Serving Unknown, FatalError, over the verdict):
# `core.applied.served_as_last_read` reads the last verdict through it.
FAILED_RECONCILE_SEEDS = [
    ("kai", 5007),
    ("kai", 5039),
    ("kueue", 5044),
    ("fleet", 7005),
    ("serving", 8030),
    ("default", 8049),
]


@pytest.mark.parametrize(("name", "seed"), FAILED_RECONCILE_SEEDS)
def test_a_failed_replica_reconcile_unroutes_no_serving_replica(
    renderer: Renderer, name: str, seed: int
) -> None:
    result = faulted(renderer, name, seed)
    assert result.ok, result.errors
    assert result.converged


def test_the_same_seed_renders_the_same_world(renderer: Renderer) -> None:
    # The render the examples' test read, when this process ran it, and a new one.
    first = kept(renderer, *SAME_SEED)
    again = faulted(renderer, *SAME_SEED)
    assert first.faults == again.faults
    assert first.objects == again.objects
    assert first.rounds == again.rounds


def without_make_before_break(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replica that must move goes at once, serving or not: the hold removed."""
    original = retain._retain_one  # pyright: ignore[reportPrivateUsage]

    def dropped(deployment: Any, replica: Any, view: Any, fleet: Any) -> Any:
        move = must_move(deployment, replica, view, fleet)
        return move if move is not None else original(deployment, replica, view, fleet)

    monkeypatch.setattr(retain, "_retain_one", dropped)


# The seeds of CAUGHT_WITHIN whose faults break ServingKept once the hold is removed
# (seeded faults are deterministic; a change to the calls a render makes redraws them:
# seed 10's one unreachable verdict is now followed by no removal at all, hold or not;
# seed 1 catches it since a deployment whose replicas are still loading reconciles on
# its own clusters, which takes fewer calls).
COMMAND_CATCHES = frozenset({1, 4, 7, 11})


@dataclass(frozen=True)
class Unheld:
    """`render -q --faults SEED` of the main fleet with the hold removed: the command's
    run, and what the render it wrote that from found."""

    seed: int
    run: Run
    ok: bool
    violations: tuple[Violation, ...]


@pytest.fixture(scope="module", params=CAUGHT_WITHIN)
def unheld(request: pytest.FixtureRequest) -> Unheld:
    """One render per seed for both tests below, which only read it (frozen). A module
    parameter, so pytest runs a seed's two tests one after the other: workers share them."""
    seed: int = request.param
    with pytest.MonkeyPatch.context() as monkeypatch:
        without_make_before_break(monkeypatch)
        run, result = rendered(
            "render", "-q", "--faults", str(seed), EXAMPLES / "catalog", EXAMPLES / "fleet"
        )
    return Unheld(seed, run, result.ok, tuple(result.violations))


def test_faults_catch_a_serving_replica_removed_without_its_replacement(unheld: Unheld) -> None:
    caught = [str(v) for v in unheld.violations]
    if unheld.violations:
        assert {v.invariant for v in unheld.violations} == {SERVING_KEPT}, caught
        assert not unheld.ok
    # Some seed catches it: exactly those whose command fails.
    assert bool(caught) == (unheld.seed in COMMAND_CATCHES), "the removed hold went uncaught"
    assert all("removed while serving" in line for line in caught)


def test_the_command_fails_naming_round_invariant_and_object(unheld: Unheld) -> None:
    run = unheld.run
    assert (run.code != 0) == (unheld.seed in COMMAND_CATCHES), run.err
    if run.code == 0:
        return
    lines = [line for line in run.errors() if "invariant" in line]
    assert lines, run.err
    assert all(
        line.startswith("error: round ") and " invariant ServingKept broken: ModelReplica " in line
        for line in lines
    ), lines


def test_the_command_says_what_it_injected() -> None:
    run = modelplane("render", "-q", "--faults", "4", EXAMPLES / "catalog", EXAMPLES / "fleet")
    assert run.code == 0, run.err
    (note,) = [line for line in run.err.splitlines() if line.startswith("note: --faults 4: ")]
    assert "injected " in note and f"in rounds 1-{FAULT_ROUNDS}" in note


def test_faults_that_never_clear_within_the_rounds_fail_the_render(renderer: Renderer) -> None:
    documents = read_documents([str(EXAMPLES / p) for p in EXAMPLE_SETS["fleet"]])
    result = render(
        documents,
        renderer.apis,
        renderer.registry,
        renderer.admission,
        in_process=True,
        max_rounds=1,
        faults=Faults(4),
    )
    assert not result.converged
    assert any(" invariant Converges broken: " in line for line in result.errors), result.errors
