"""A settled deployment (every replica composed, serving, current) asks only for the
clusters its replicas run on (compose_model_deployment.settled); what changes there,
or in its own spec, still reaches it. Each scenario renders a fleet until it settles,
exports it, changes one thing and renders on from the export, round by round:

- its cluster drains (a NoExecute taint): the replica moves, make-before-break;
- a higher-priority deployment arrives on its cluster, which lets it preempt: it
  yields, and says who preempted it;
- it scales up: the new replica is placed on a cluster it did not run on (wide);
- its template changes: the rollout reaches every replica.
"""

from pathlib import Path
from typing import Any

from modelplane_cli import yamlio

from .cli import Fleet, modelplane
from .fleets import placed_clusters
from .manifests import h100_cluster, h100_model

DRAIN = "  taints: [{key: example.com/maintenance, value: '2026-12-01', effect: NoExecute}]\n"


def _settled(tmp_path: Path, repo: Fleet, manifests: str) -> Path:
    """Render `manifests` until it settles and export the world, as `--observed`."""
    repo.path("fleet.yaml").write_text(manifests)
    settled = modelplane("render", repo.root, "-o", "yaml")
    assert settled.code == 0, settled.err
    world = tmp_path / "world.yaml"
    world.write_text(yamlio.dump_all([o for o in settled.objects if o["kind"] != "Event"]))
    return world


def _events(objects: list[dict[str, Any]], reason: str) -> list[str]:
    return [o["message"] for o in objects if o["kind"] == "Event" and o["reason"] == reason]


def test_a_settled_deployment_whose_cluster_drains_moves(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "drain", "catalog")
    model = h100_model("alpha", "team-a")
    world = _settled(tmp_path, repo, h100_cluster("first", 1) + h100_cluster("second", 1) + model)
    (was,) = placed_clusters(yamlio.load_all(world.read_text()))["alpha"]
    other = "second" if was == "first" else "first"
    repo.path("fleet.yaml").write_text(
        h100_cluster(was, 1, spec=DRAIN) + h100_cluster(other, 1) + model
    )

    run = modelplane("render", repo.root, "--observed", world, "-o", "yaml")

    assert run.code == 0, run.err
    assert placed_clusters(run.objects) == {"alpha": [other]}
    assert any(f"on cluster {other}" in m for m in _events(run.objects, "ReplicaPlaced"))
    (removed,) = _events(run.objects, "ReplicaRemoved")
    assert f"from cluster {was}" in removed


def test_a_settled_deployment_preempted_on_its_cluster_yields(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "preempt", "catalog")
    cluster = h100_cluster("solo", 1, spec="  scheduling: {preemption: LowerPriority}\n")
    batch = h100_model("batch", "team-0", spec="  priority: train\n")
    world = _settled(tmp_path, repo, cluster + batch)
    urgent = h100_model("urgent", "team-a", spec="  priority: inference\n")
    repo.path("fleet.yaml").write_text(cluster + batch + urgent)

    run = modelplane("render", repo.root, "--observed", world, "-o", "yaml")

    assert placed_clusters(run.objects) == {"batch": [], "urgent": ["solo"]}
    assert not any("overcommitted" in e for e in run.errors())
    assert any("was preempted by" in m for m in _events(run.objects, "Preempted"))
    scheduled = run.condition("ModelDeployment", "batch", "ReplicasScheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Preempted")


def test_a_settled_deployment_scaled_up_places_beyond_its_clusters(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "scale", "catalog")
    clusters = h100_cluster("first", 1) + h100_cluster("second", 1)
    world = _settled(tmp_path, repo, clusters + h100_model("alpha", "team-a"))
    repo.path("fleet.yaml").write_text(clusters + h100_model("alpha", "team-a", replicas=2))

    run = modelplane("render", repo.root, "--observed", world, "-o", "yaml")

    assert placed_clusters(run.objects) == {"alpha": ["first", "second"]}


def test_a_settled_deployment_whose_template_changes_rolls(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "roll", "catalog")
    clusters = h100_cluster("first", 2) + h100_cluster("second", 2)
    model = h100_model("alpha", "team-a", replicas=2)
    world = _settled(tmp_path, repo, clusters + model)
    before = {
        o["metadata"]["name"]: o["metadata"]["annotations"]["modelplane.ai/revision"]
        for o in yamlio.load_all(world.read_text())
        if o["kind"] == "ModelReplica"
    }
    repo.path("fleet.yaml").write_text(
        clusters + model.replace("vllm/vllm-openai:", "vllm/vllm-openai-next:")
    )

    run = modelplane("render", repo.root, "--observed", world, "-o", "yaml")

    after = {
        o["metadata"]["name"]: o["metadata"]["annotations"]["modelplane.ai/revision"]
        for o in run.objects
        if o["kind"] == "ModelReplica"
    }
    assert len(after) == 2
    assert set(after.values()).isdisjoint(before.values())
    progressing = run.condition("ModelDeployment", "alpha", "Progressing")
    assert progressing["reason"] == "RolloutComplete", progressing
