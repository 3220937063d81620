"""Racing for the last node under `render --concurrent`: every composite of a round sees
the same snapshot, so three deployments take four of three nodes; the round after, the
replica that comes last by precedence and is not serving yet yields, and the fleet
converges with no device overcommitted."""

from pathlib import Path

from modelplane_cli import yamlio

from .cli import Fleet, modelplane
from .manifests import h100_cluster, h100_model


def test_racing_for_the_last_node_converges_without_overcommit(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "race", "catalog")
    models = [("incumbent", "team-0", 2), ("alpha", "team-a", 1), ("beta", "team-b", 1)]
    repo.path("race.yaml").write_text(
        h100_cluster("solo", 3) + "".join(h100_model(n, ns, replicas=r) for n, ns, r in models)
    )

    run = modelplane("render", repo.root, "--concurrent", "-o", "yaml")

    placed = {
        o["metadata"]["name"]: len(o["status"].get("placements") or [])
        for o in run.objects
        if o["kind"] == "ModelDeployment"
    }
    assert placed == {"alpha": 1, "beta": 0, "incumbent": 2}
    assert not any("overcommitted" in e for e in run.errors())
    removals = [
        o["message"]
        for o in run.objects
        if o["kind"] == "Event" and o["reason"] == "ReplicaRemoved"
    ]
    (removed,) = removals
    assert "Removed replica beta-" in removed
    assert "yielded pool h100 to a replica in another namespace" in removed


def test_racing_preemptors_converge_without_overcommit_or_ping_pong(tmp_path: Path) -> None:
    """A cluster that allows preemption, full of serving `train` (50) replicas; two
    `inference` (125) deployments arrive in one round under --concurrent. Each preempts
    one batch replica; neither preempts the other (equal priority); nothing overcommits."""
    repo = Fleet(tmp_path / "preempt", "catalog")
    cluster = h100_cluster("solo", 3, spec="  scheduling: {preemption: LowerPriority}\n")
    batch = h100_model("batch", "team-0", replicas=3, spec="  priority: train\n")
    repo.path("fleet.yaml").write_text(cluster + batch)
    settled = modelplane("render", repo.root, "-o", "yaml")
    assert settled.code == 0, settled.err
    world = tmp_path / "world.yaml"
    world.write_text(yamlio.dump_all([o for o in settled.objects if o["kind"] != "Event"]))
    urgent = "".join(
        h100_model(name, ns, spec="  priority: inference\n")
        for name, ns in (("alpha", "team-a"), ("beta", "team-b"))
    )
    repo.path("fleet.yaml").write_text(cluster + batch + urgent)

    run = modelplane("render", repo.root, "--observed", world, "--concurrent", "-o", "yaml")

    placed = {
        o["metadata"]["name"]: len(o["status"].get("placements") or [])
        for o in run.objects
        if o["kind"] == "ModelDeployment"
    }
    assert placed == {"alpha": 1, "beta": 1, "batch": 1}
    assert not any("overcommitted" in e for e in run.errors())
    events = [o for o in run.objects if o["kind"] == "Event"]
    preempted = [e["message"] for e in events if e["reason"] == "Preempted"]
    assert len([m for m in preempted if "was preempted by" in m]) == 2, preempted
    scheduled = run.condition("ModelDeployment", "batch", "ReplicasScheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Preempted")
