"""Readiness policies for remote objects, and reading a workload's status back."""

from typing import Any

import celpy
import pytest
from celpy.adapter import json_to_cel

from modelplane.core import kinds
from modelplane.core.kinds import DEPLOYMENT, LLM_INFERENCE_SERVICE
from modelplane.workloads import (
    SHARED_MANAGEMENT_POLICIES,
    render_replica,
    replica_status,
)

from .inputs import read_cluster, read_replica


def _conditions(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": "w"},
        "status": {"conditions": [{"type": t, "status": s, "reason": "R"} for t, s in pairs]},
    }


def _counted(obj: dict[str, Any], replicas: int | None = None, **counts: int) -> dict[str, Any]:
    """`obj` with `spec.replicas` (when given) and the status counts its controller reports."""
    out = {**obj, "status": {**obj["status"], **counts}}
    if replicas is not None:
        out["spec"] = {"replicas": replicas}
    return out


def _generation(obj: dict[str, Any], generation: int, observed: int | None) -> dict[str, Any]:
    """`obj` at `metadata.generation`, its status written for `observed` (None: no
    observedGeneration reported)."""
    status = dict(obj["status"])
    if observed is not None:
        status["observedGeneration"] = observed
    return {**obj, "metadata": {**obj["metadata"], "generation": generation}, "status": status}


UP = _conditions(("Available", "True"))
DONE = _counted(UP, availableReplicas=1, updatedReplicas=1)


def _cel(query: str, obj: dict[str, Any]) -> bool:
    env = celpy.Environment()
    return bool(env.program(env.compile(query)).evaluate({"object": json_to_cel(obj)}))


@pytest.mark.parametrize(
    ("kind", "observed", "ready"),
    [
        ("Deployment", {}, False),
        ("Deployment", {"status": {}}, False),
        ("Deployment", _counted(UP, availableReplicas=1, updatedReplicas=1), True),
        ("Deployment", _counted(UP, 2, availableReplicas=2, updatedReplicas=2), True),
        # Available, yet its one pod restarts (maxUnavailable 1 allows it): not serving.
        ("Deployment", UP, False),
        ("Deployment", _counted(UP, 2, availableReplicas=1, updatedReplicas=2), False),
        ("Deployment", _counted(UP, availableReplicas=1), False),
        ("Deployment", _conditions(("Progressing", "True"), ("Available", "False")), False),
        ("Deployment", _conditions(("Ready", "True")), False),
        ("LeaderWorkerSet", _counted(UP, 3, readyReplicas=3, updatedReplicas=3), True),
        ("LeaderWorkerSet", _counted(UP, 3, readyReplicas=3, updatedReplicas=2), False),
        ("LeaderWorkerSet", _conditions(("Available", "Unknown")), False),
        ("LLMInferenceService", _conditions(("Ready", "True")), True),
        ("LLMInferenceService", _conditions(("Available", "True")), False),
        # Right after an update the read-back is the apply's answer: the status the
        # controller wrote for the previous generation, whatever it says.
        ("Deployment", _generation(DONE, 2, 2), True),
        ("Deployment", _generation(DONE, 2, 3), True),
        ("Deployment", _generation(DONE, 2, 1), False),
        # A status with no observedGeneration comes from a controller that never
        # writes one (LeaderWorkerSet before v0.9.0): judged on the status alone.
        ("Deployment", _generation(DONE, 2, None), True),
        (
            "LeaderWorkerSet",
            _generation(_counted(UP, 2, readyReplicas=2, updatedReplicas=2), 4, None),
            True,
        ),
        (
            "LeaderWorkerSet",
            _generation(_counted(UP, 2, readyReplicas=2, updatedReplicas=2), 4, 3),
            False,
        ),
        ("LLMInferenceService", _generation(_conditions(("Ready", "True")), 5, 4), False),
        ("LLMInferenceService", _generation(_conditions(("Ready", "True")), 5, 5), True),
    ],
)
def test_workload_readiness_checks_the_kinds_own_condition(
    kind: str, observed: dict[str, Any], ready: bool
) -> None:
    block = kinds.named(kind).readiness()
    assert block["policy"] == "DeriveFromCelQuery"
    assert _cel(block["celQuery"], observed) is ready
    # The status helper agrees with the readiness policy.
    assert kinds.named(kind).serving(observed)[0] is ready


@pytest.mark.parametrize("backend", ["Native", "KServe"])
def test_rendered_readiness(build: Any, backend: str) -> None:
    rendered = render_replica(
        read_replica(build.replica(decode=build.role(), prefill=build.role())),
        read_cluster(build.cluster(backend=backend)),
    )
    objects = rendered.objects()
    workloads = {w.key: w.kind for w in rendered.workloads}
    for obj in objects:
        if obj.key in workloads:
            assert obj.readiness == workloads[obj.key].readiness()
            assert obj.manifest["kind"] == workloads[obj.key].kind
        else:
            assert obj.readiness == {"policy": "SuccessfulCreate"}
    namespace = next(o for o in objects if o.key == "namespace")
    # Every replica in the namespace composes it: none may delete it.
    assert namespace.management_policies == SHARED_MANAGEMENT_POLICIES
    assert "Delete" not in namespace.management_policies
    assert all(o.management_policies == ("*",) for o in objects if o.key != "namespace")


def test_workload_status_messages() -> None:
    assert DEPLOYMENT.serving(None) == (False, "Deployment has not been observed yet")
    assert DEPLOYMENT.serving({"metadata": {"name": "w"}}) == (
        False,
        "Deployment w has not reported Available yet",
    )
    failing = {
        "metadata": {"name": "w"},
        "status": {
            "conditions": [
                {"type": "Available", "status": "False", "message": "0/3 replicas available"}
            ]
        },
    }
    assert DEPLOYMENT.serving(failing) == (
        False,
        "Deployment w is not Available: 0/3 replicas available",
    )
    assert LLM_INFERENCE_SERVICE.serving(_conditions(("Ready", "True"))) == (
        True,
        "LLMInferenceService w is Ready",
    )
    assert DEPLOYMENT.serving({"status": {"conditions": "junk"}})[0] is False
    assert DEPLOYMENT.serving(_generation(DONE, 2, 1)) == (
        False,
        "Deployment w is Available for an older spec: its controller has not observed "
        "generation 2 yet (its status is for generation 1)",
    )
    assert DEPLOYMENT.serving(_generation(DONE, 2, None)) == (True, "Deployment w is Available")
    # As a Struct carries them, generations arrive as doubles.
    doubles = _generation(DONE, 2, 1)
    doubles["metadata"]["generation"], doubles["status"]["observedGeneration"] = 2.0, 1.0
    assert DEPLOYMENT.serving(doubles)[0] is False
    restarting = _counted(UP, 1, updatedReplicas=1)
    assert DEPLOYMENT.serving(restarting) == (
        False,
        "Deployment w is Available with availableReplicas 0 of 1",
    )


def test_other_kinds_are_not_workloads() -> None:
    with pytest.raises(ValueError, match="not a workload kind"):
        kinds.named("Namespace")


def test_replica_serves_only_when_every_workload_does(build: Any) -> None:
    workloads = render_replica(
        read_replica(build.replica(decode=build.role(), prefill=build.role())),
        read_cluster(build.cluster()),
    ).workloads
    up = _counted(UP, availableReplicas=1, updatedReplicas=1)
    down = _conditions(("Available", "False"))
    serving, message = replica_status(workloads, {"workload-decode": up, "workload-prefill": up})
    assert serving and "is Available" in message
    serving, message = replica_status(workloads, {"workload-decode": up, "workload-prefill": down})
    assert not serving
    assert message == "Deployment w is not Available: R"
    serving, message = replica_status(workloads, {"workload-decode": up})
    assert not serving and "not been observed" in message
    assert replica_status([], {})[0] is False
