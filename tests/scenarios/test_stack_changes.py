"""A Managed cluster with running replicas switches its scheduler or its backend.

Crossplane garbage-collects what a function stops desiring before it applies
anything, and its Usage webhook refuses with 409 the deletion of an object a
Usage names: a Release that left the desired state while a Usage still named it
would wedge the cluster for good. Stepped one round at a time, no round deletes
a Release that a Usage named when the round began or still names after it; the
releases the cluster no longer plans stay until nothing uses them, then go.
"""

from collections.abc import Callable
from typing import Any

import pytest

from .fleets import Fleet, Renderer, find
from .test_examples import SETS

Obj = dict[str, Any]
CLUSTER = "managed-kserve"
ROUND_LIMIT = 40


@pytest.fixture(scope="module")
def stack(renderer: Renderer) -> Fleet:
    rendered = renderer.paths(*SETS["stack"])
    assert rendered.result.ok, rendered.result.errors
    return rendered


def _key(obj: Obj) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def releases(objects: list[Obj]) -> set[tuple[str, str]]:
    return {_key(o) for o in objects if o["kind"] == "Release"}


def protected(objects: list[Obj]) -> set[tuple[str, str]]:
    """The Releases some Usage names (`spec.of`)."""
    named: set[tuple[str, str]] = set()
    for usage in (o for o in objects if o["kind"] == "Usage"):
        of = usage["spec"]["of"]
        if of["kind"] == "Release":
            ref = of["resourceRef"]
            named.add((ref.get("namespace", usage["metadata"]["namespace"]), ref["name"]))
    return named


def step(fleet: Fleet, change: Callable[[list[Obj]], None]) -> tuple[Fleet, list[str]]:
    """Render `change` one round at a time to its fixed point; return the fixed point
    and every Release deleted in a round while a Usage named it."""
    refused: list[str] = []
    current, edit = fleet, change
    for _ in range(ROUND_LIMIT):
        after = current.edit(edit, rounds=1)
        errors = [e for e in after.result.errors if "did not converge" not in e]
        assert errors == [], errors
        gone = releases(current.objects) - releases(after.objects)
        named = protected(current.objects) | protected(after.objects)
        refused += sorted(f"{ns}/{name}" for ns, name in gone & named)
        if after.result.converged:
            return after, refused
        current, edit = after, (lambda objects: None)
    raise AssertionError(f"no fixed point in {ROUND_LIMIT} rounds")


def _cluster(objects: list[Obj]) -> Obj:
    return find(objects, "InferenceCluster", CLUSTER)


def to_volcano(objects: list[Obj]) -> None:
    _cluster(objects)["spec"]["scheduling"]["provider"] = "Volcano"


def to_native(objects: list[Obj]) -> None:
    _cluster(objects)["spec"]["backend"] = {"type": "Native"}


def without_models(objects: list[Obj]) -> None:
    objects[:] = [o for o in objects if o["kind"] != "ModelDeployment"]


def names(objects: list[Obj]) -> set[str]:
    return {name for _, name in releases(objects)}


def replicas_on(fleet: Fleet) -> list[Obj]:
    return [r for r in fleet.all("ModelReplica") if r["spec"]["clusterName"] == CLUSTER]


@pytest.mark.parametrize(
    ("change", "leaving", "arriving"),
    [
        (to_volcano, {"managed-kserve-kueue"}, {"managed-kserve-volcano"}),
        (
            to_native,
            {"managed-kserve-kserve-llmisvc", "managed-kserve-cert-manager"},
            set[str](),
        ),
    ],
)
def test_a_switch_with_running_replicas_never_deletes_a_protected_release(
    stack: Fleet,
    change: Callable[[list[Obj]], None],
    leaving: set[str],
    arriving: set[str],
) -> None:
    assert replicas_on(stack), "the cluster runs replicas"
    assert leaving <= names(stack.objects)

    switched, refused = step(stack, change)

    assert refused == []
    assert arriving <= names(switched.objects)
    # The replicas placed while the old releases were needed still run: the old
    # releases stay, and StackReady says they are retiring.
    assert replicas_on(switched)
    assert leaving <= names(switched.objects)
    message = switched.condition("InferenceCluster", CLUSTER, "StackReady")["message"]
    assert "retiring once no Usage names them" in message
    assert all(name in message for name in leaving)

    # Once nothing runs there, the old releases go, Usages first, each in its turn.
    emptied, refused = step(switched, without_models)

    assert refused == []
    assert not replicas_on(emptied)
    assert not leaving & names(emptied.objects)
    assert arriving <= names(emptied.objects)


def test_a_backend_switch_replaces_each_replica_make_before_break(stack: Fleet) -> None:
    """KServe to Native under running replicas: each is replaced by one rendered with
    Native where there is room, and the others keep running as KServe placed them
    (their workload's kind never changes under its Object), their rollout stalled."""
    switched, _ = step(stack, to_native)

    backends = {
        r["metadata"]["name"]: r["metadata"]["annotations"]["modelplane.ai/backend"]
        for r in replicas_on(switched)
    }
    moved = {r["metadata"]["name"] for r in replicas_on(stack)} - set(backends)
    assert moved, "some replica was replaced"
    assert "Native" in backends.values()
    stalled = switched.condition("ModelDeployment", "split", "Progressing")
    for name, backend in backends.items():
        assert backend == "Native" or name in stalled["message"], (name, stalled)
    kinds = {
        o["spec"]["forProvider"]["manifest"]["kind"]
        for o in switched.all("Object")
        if o["metadata"]["name"].startswith(tuple(backends))
        and o["spec"]["forProvider"]["manifest"]["kind"] in ("Deployment", "LLMInferenceService")
    }
    assert kinds == {"Deployment", "LLMInferenceService"}
