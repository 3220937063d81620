"""A preview that can be trusted: what the clusters would refuse, run, or still be rolling out.

The main example fleet puts deepseek-r1 in Deployments on prod-us-east, kimi-k2 in
a LeaderWorkerSet there and an LLMInferenceService on prod-eu-west, and llama-8b
in LLMInferenceServices on prod-eu-west.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from modelplane_cli import yamlio

from .cli import Fleet, Obj, Run, modelplane
from .manifests import h100_cluster, h100_model

DEEPSEEK = "deepseek-r1-94a619b8bc"
KIMI_US = "kimi-k2-cef100b736"
KIMI_EU = "kimi-k2-7cfa0a1295"
LLAMA = ("llama-8b-62ef462dbb", "llama-8b-f546475cfc")


def fleet(tmp_path: Path) -> Fleet:
    return Fleet(tmp_path / "my-fleet", "catalog", "fleet")


def _template(deployment: str, role: str = "workers") -> str:
    """The YAML text right after a deployment's engine container's args, to append to."""
    return {
        "llama-8b": '            args: ["--model=meta-llama/Llama-3.1-8B-Instruct", '
        '"--max-model-len=8192"]',
        "kimi-k2": '            args: ["--model=moonshotai/Kimi-K2-Instruct", '
        '"--data-parallel-size=16", "--data-parallel-size-local=8", "--enable-expert-parallel"]',
    }[deployment]


def _status(run: Run, kind: str, name: str, condition: str) -> tuple[str, str]:
    found = run.condition(kind, name, condition)
    return found["status"], found["reason"]


def test_a_template_a_deployment_may_not_restart_is_refused_and_never_serves(
    tmp_path: Path, reference_crds: Path
) -> None:
    repo = fleet(tmp_path)

    def never_restart(deployment: Obj) -> None:
        deployment["spec"]["decode"]["workers"]["template"]["spec"]["restartPolicy"] = "Never"

    repo.edit("fleet/deployments.yaml", "ModelDeployment", "deepseek-r1", never_restart)

    run = modelplane("render", repo.root, "--crds", reference_crds, "-o", "yaml")

    assert run.code == 1
    accepted = run.condition("ModelReplica", DEEPSEEK, "Accepted")
    assert (accepted["status"], accepted["reason"]) == ("False", "WorkloadRejected")
    assert accepted["message"] == (
        "workload-decode: create failed: cannot create object: Deployment.apps "
        f'"{DEEPSEEK}-decode" is invalid: spec.template.spec.restartPolicy: UnsupportedValueError value: '
        '"Never": supported values: "Always"'
    )
    assert _status(run, "ModelReplica", DEEPSEEK, "Serving") == ("False", "WorkloadNotAvailable")
    (refused,) = [
        o
        for o in run.objects
        if o["kind"] == "Object"
        and o["spec"]["forProvider"]["manifest"]["metadata"]["name"] == f"{DEEPSEEK}-decode"
    ]
    synced = {c["type"]: c for c in refused["status"]["conditions"]}
    assert (synced["Synced"]["status"], synced["Ready"]["status"]) == ("False", "False")
    # One line, at the deployment's field: not again for the replica and the deployment.
    (line,) = run.errors()
    assert line.endswith(
        "ModelDeployment ml-team-prod/deepseek-r1: spec.decode.workers.template.spec."
        'restartPolicy: UnsupportedValueError value: "Never": supported values: "Always" '
        f"(the API server of prod-us-east would refuse Deployment {DEEPSEEK}-decode)"
    )


def test_a_malformed_quantity_is_refused_by_the_custom_resource_s_schema(
    tmp_path: Path, reference_crds: Path
) -> None:
    repo = fleet(tmp_path)
    repo.replace(
        "fleet/deployments.yaml",
        _template("llama-8b"),
        _template("llama-8b") + "\n            resources: {limits: {memory: lots}}",
    )

    run = modelplane("render", repo.root, "--crds", reference_crds, "-o", "yaml")

    assert run.code == 1
    for replica in LLAMA:
        accepted = run.condition("ModelReplica", replica, "Accepted")
        assert accepted["reason"] == "WorkloadRejected"
        assert (
            f'LLMInferenceService.serving.kserve.io "{replica}" is invalid: '
            'spec.template.containers[0].resources.limits[memory]: Invalid value: "lots"'
        ) in accepted["message"]
        assert _status(run, "ModelReplica", replica, "Serving")[0] == "False"
    assert run.one("ModelDeployment", "llama-8b")["status"]["replicas"] == {"total": 2, "ready": 0}


def test_a_pull_policy_no_kubelet_knows_leaves_the_workloads_unavailable(
    tmp_path: Path, reference_crds: Path
) -> None:
    """The LeaderWorkerSet and LLMInferenceService CRDs accept any string there, so
    the API server stores them; their controllers cannot create the pods."""
    repo = fleet(tmp_path)
    repo.replace(
        "fleet/deployments.yaml",
        _template("kimi-k2"),
        _template("kimi-k2") + "\n            imagePullPolicy: Sometimes",
    )

    run = modelplane("render", repo.root, "--crds", reference_crds, "-o", "yaml")

    assert run.code == 1
    for replica in (KIMI_US, KIMI_EU):
        assert _status(run, "ModelReplica", replica, "Accepted") == ("True", "WorkloadApplied")
        serving = run.condition("ModelReplica", replica, "Serving")
        assert serving["status"] == "False"
        assert "pods cannot be created from its template" in serving["message"]
        assert 'imagePullPolicy: UnsupportedValueError value: "Sometimes"' in serving["message"]
    assert run.one("ModelDeployment", "kimi-k2")["status"]["replicas"] == {"total": 2, "ready": 0}


# `repo` is a fresh fleet repository and `world` its running world, rendered once per
# session (conftest): what rendering the repository here would give.


def test_the_observed_state_of_a_workload_wins_while_its_manifest_is_unchanged(
    repo: Fleet, world: Path
) -> None:
    objects = [o for o in yamlio.load_all(world.read_text()) if o is not None]
    (lws,) = [
        o
        for o in objects
        if o["kind"] == "Object"
        and o["spec"]["forProvider"]["manifest"]["kind"] == "LeaderWorkerSet"
    ]
    lws["status"]["atProvider"]["manifest"]["status"] = {
        "conditions": [{"type": "Available", "status": "False", "reason": "PodsPending"}]
    }
    world.write_text(yamlio.dump_all(objects))

    run = modelplane("render", "--observed", world, repo.root, "-o", "yaml")

    serving = run.condition("ModelReplica", KIMI_US, "Serving")
    assert (serving["status"], serving["reason"]) == ("False", "WorkloadNotAvailable")
    assert "PodsPending" in serving["message"]
    # Not an error: the workload is the cluster's to bring back.
    assert run.code == 0, run.err


def test_a_changed_template_is_in_flight_for_a_round(repo: Fleet, world: Path) -> None:
    repo.replace("fleet/deployments.yaml", "vllm/vllm-openai:v0.7.3", "vllm/vllm-openai:v0.8.0", 2)

    def one_at_a_time(deployment: Obj) -> None:
        # The example fleet is full, so nothing can surge: one replica at a time restarts.
        deployment["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 1}}

    repo.edit("fleet/deployments.yaml", "ModelDeployment", "kimi-k2", one_at_a_time)

    # The change rolls out, one replica after the other: each is not serving while its
    # change is applied and rolls, its endpoint leaves and comes back once it serves
    # again; ten rounds to a fixed point. The story converges only at its last round,
    # so each `--rounds N` renders from the start: the rounds between the first and
    # the last are rendered only until one shows the replica not serving.
    def serving(count: int) -> tuple[Run, str]:
        run = modelplane(
            "render", "--observed", world, repo.root, "-o", "yaml", "--rounds", str(count)
        )
        return run, run.condition("ModelReplica", KIMI_US, "Serving")["status"]

    run, last = serving(10)

    assert serving(1)[1] == "True"
    assert any(serving(count)[1] == "False" for count in range(2, 10))
    assert last == "True"
    assert run.code == 0, run.err
    assert run.one("ModelDeployment", "kimi-k2")["status"]["replicas"] == {"total": 2, "ready": 2}


@pytest.mark.parametrize("concurrent", [False, True], ids=["sequential", "concurrent"])
def test_two_deployments_racing_for_one_node(tmp_path: Path, concurrent: bool) -> None:
    """Reconciled one after the other, the second finds the node taken. Reconciled at the
    same moment, both see it free and both place; the round after, each sees the pool
    hold more than it can, and precedence settles it the same way for both: equal
    priority, no creation times, so namespace and name decide, and beta's replica,
    not serving yet, yields. Either way nothing ends overcommitted."""
    repo = Fleet(tmp_path / "race", "catalog")
    repo.path("race.yaml").write_text(
        h100_cluster("solo", 1) + h100_model("alpha", "team-a") + h100_model("beta", "team-b")
    )
    flags = ["--concurrent"] if concurrent else []

    run = modelplane("render", repo.root, *flags, "-o", "yaml")

    assert run.code == 1
    placed = [
        o["metadata"]["name"]
        for o in run.objects
        if o["kind"] == "ModelDeployment" and o["status"].get("placements")
    ]
    assert placed == ["alpha"]
    assert not any("overcommitted" in e for e in run.errors())
    assert (
        "error: ModelDeployment team-b/beta: ReplicasScheduled=False (InsufficientCapacity)"
        in run.err
    )
    removals = [
        o["message"]
        for o in run.objects
        if o["kind"] == "Event" and o["reason"] == "ReplicaRemoved"
    ]
    if concurrent:
        (removed,) = removals
        assert "yielded pool h100 to a replica in another namespace" in removed
    else:
        assert removals == []


def test_events_of_every_round_are_in_the_output(unedited_world: str) -> None:
    """`render -o yaml` of the example fleet's repository: the session's `unedited_world`."""
    run = Run(0, unedited_world, "")

    placed = sorted(
        o["message"].split(": ", 1)[1]
        for o in run.objects
        if o["kind"] == "Event" and o["reason"] == "ReplicaPlaced"
    )
    assert placed == [
        f"Placed replica {DEEPSEEK} on cluster prod-us-east (pool decode on h200, prefill on h100)",
        f"Placed replica {KIMI_EU} on cluster prod-eu-west (pool h100)",
        f"Placed replica {KIMI_US} on cluster prod-us-east (pool h100)",
        f"Placed replica {LLAMA[0]} on cluster prod-eu-west (pool l4)",
        f"Placed replica {LLAMA[1]} on cluster prod-eu-west (pool l4)",
    ]
