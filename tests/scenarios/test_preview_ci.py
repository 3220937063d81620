"""The CI recipe: a pull request to a fleet repository, previewed against the running fleet.

    modelplane render --observed world.yaml my-fleet/ -o diff --fail-on error

`world.yaml` is the running fleet (here: the main example fleet, rendered); the
pull request edits `my-fleet/`. A change the fleet would refuse or cannot carry
out fails the job; a good change shows what it does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli import Fleet, Obj, modelplane, preview

KIMI_US = "kimi-k2-cef100b736"


def test_an_unchanged_repository_previews_no_change(world: Path, repo: Fleet) -> None:
    run = preview(world, repo, "--fail-on", "error")

    assert (run.code, run.out) == (0, "No changes.\n"), run.err


def _add_us_west(repo: Fleet) -> None:
    clusters = repo.text("fleet/clusters.yaml")
    us_east = clusters[: clusters.index("\n---\n")]
    repo.path("fleet/us-west.yaml").write_text(
        us_east.replace("prod-us-east-kubeconfig", "prod-eu-west-kubeconfig")
        .replace("name: prod-us-east", "name: prod-us-west")
        .replace("region: us-east", "region: us-west")
    )


def test_a_new_cluster_and_a_scale_up_show_where_the_replica_lands(
    world: Path, repo: Fleet
) -> None:
    def scale(deployment: Obj) -> None:
        deployment["spec"]["replicas"] = 3

    repo.edit("fleet/deployments.yaml", "ModelDeployment", "kimi-k2", scale)
    _add_us_west(repo)

    run = preview(world, repo, "--fail-on", "error")

    assert run.code == 0, run.err
    assert "added    InferenceCluster prod-us-west" in run.out
    (placed,) = [line for line in run.out.splitlines() if line.startswith("placed ")]
    assert placed.startswith("placed   ModelDeployment ml-team-prod/kimi-k2: kimi-k2-")
    assert placed.endswith(" on prod-us-west (workers=h100)")
    summary = run.out.splitlines()[-1]
    assert summary.endswith("replicas: 1 placed, 0 moved, 0 replaced, 0 removed")

    # The same repository and world given both as PATHs preview the same change.
    natural = modelplane("render", repo.root, world, "-o", "diff")
    assert (natural.code, natural.out) == (0, run.out)


def test_selecting_another_region_moves_the_replicas(world: Path, repo: Fleet) -> None:
    def us_west(deployment: Obj) -> None:
        deployment["spec"]["clusterSelector"] = {"matchLabels": {"region": "us-west"}}

    repo.edit("fleet/deployments.yaml", "ModelDeployment", "kimi-k2", us_west)
    _add_us_west(repo)

    run = preview(world, repo)

    assert run.code == 0, run.err
    moved = [line for line in run.out.splitlines() if line.startswith("moved ")]
    assert len(moved) == 2
    assert all(line.endswith(" on prod-us-west (workers=h100)") for line in moved)
    assert f"{KIMI_US} on prod-us-east (workers=h100) -> kimi-k2-" in "\n".join(moved)
    assert f"removed  ModelReplica ml-team-prod/{KIMI_US}" in run.out
    assert run.out.splitlines()[-1].endswith("replicas: 0 placed, 2 moved, 0 replaced, 0 removed")


def test_scaling_down_shows_the_replica_removed(world: Path, repo: Fleet) -> None:
    def one(deployment: Obj) -> None:
        deployment["spec"]["replicas"] = 1

    repo.edit("fleet/deployments.yaml", "ModelDeployment", "kimi-k2", one)

    run = preview(world, repo)

    assert run.code == 0, run.err
    assert f"removed  ModelDeployment ml-team-prod/kimi-k2: {KIMI_US} on prod-us-east" in run.out
    assert run.out.splitlines()[-1].endswith("replicas: 0 placed, 0 moved, 0 replaced, 1 removed")


BREAKAGES = {
    "cel-syntax-error": (
        "fleet/deployments.yaml",
        'quantity("79Gi")) >= 0',
        'quantity("79Gi")) >=',
        "error: ModelDeployment ml-team-prod/kimi-k2: ReplicasScheduled=False "
        "(InvalidNodeSelector): spec.nodeSelector.devices[0].selectors[0].cel:",
    ),
    "unknown-class": (
        "fleet/clusters.yaml",
        "{name: h200, className: h200-8x, nodeCount: 2}",
        "{name: h200, className: h200-9x, nodeCount: 2}",
        "error: InferenceCluster prod-us-east: PoolsResolved=False (ClassNotFound)",
    ),
    "unknown-priority": (
        "fleet/deployments.yaml",
        "  replicas: 1\n  model:",
        "  replicas: 1\n  priority: batch\n  model:",
        'ModelDeployment ml-team-prod/deepseek-r1: spec.priority: "batch": no PriorityClass',
    ),
    "invalid-scheduling-template": (
        "fleet/clusters.yaml",
        'example.com/team: "{{ .Namespace }}"',
        'example.com/team: "{{ .Tenant }}"',
        "InferenceCluster prod-us-east: SchedulingConfigured=False (InvalidScheduling)",
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_pull_request_that_breaks_the_fleet_fails_the_job(
    world: Path, repo: Fleet, breakage: str
) -> None:
    relative, old, new, expected = BREAKAGES[breakage]
    repo.replace(relative, old, new)

    run = preview(world, repo, "--fail-on", "error")

    assert run.code == 1
    # A line names the object (after its file:line when it has one).
    assert any(line.startswith(expected) or f": {expected}" in line for line in run.errors()), (
        run.err
    )
    # The diff is still printed, so the job log shows what the change would do.
    assert run.out.splitlines()[-1].startswith(tuple("0123456789"))

    # --fail-on never restores exit 0: the inputs were admitted and the world converged.
    assert preview(world, repo, "--fail-on", "never").code == 0


def test_a_document_the_api_server_rejects_fails_even_with_fail_on_never(
    world: Path, repo: Fleet
) -> None:
    repo.replace("fleet/deployments.yaml", "replicas: 2", "replicas: -1")

    run = preview(world, repo, "--fail-on", "never")

    assert run.code == 1
    assert 'ModelDeployment.modelplane.ai "llama-8b" is invalid: spec.replicas' in run.err


def test_warnings_fail_the_job_only_when_asked(tmp_path: Path) -> None:
    """The Volcano example warns that the LWS Volcano provider drops a gang's priority."""
    fleet = Fleet(tmp_path / "volcano", "catalog", "schedulers/models.yaml", "schedulers/volcano")

    assert modelplane("render", fleet.root).code == 0
    run = modelplane("render", fleet.root, "--fail-on", "warning")
    assert run.code == 1
    assert "Warning PriorityNotExpressible" in run.err


def test_version() -> None:
    run = modelplane("--version")

    assert run.code == 0
    assert run.out.startswith("modelplane ")


def test_a_pool_change_within_a_cluster_is_a_move() -> None:
    from modelplane_cli.render.diff import replica_changes

    def deployment(pools: str, cluster: str = "east") -> Obj:
        return {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelDeployment",
            "metadata": {"name": "chat", "namespace": "ml"},
            "status": {
                "placements": [
                    {"replica": "chat-1", "cluster": cluster, "pools": {"workers": pools}}
                ]
            },
        }

    changes = replica_changes([deployment("h100")], [deployment("h200")])

    assert changes.lines() == [
        "moved    ModelDeployment ml/chat: chat-1 on east (workers=h100) -> chat-1 on east "
        "(workers=h200)"
    ]
