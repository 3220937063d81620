"""Racing for the last node under `render --concurrent`: every composite of a round sees
the same snapshot, so three deployments take four of three nodes; the round after, the
replica that comes last by precedence and is not serving yet yields, and the fleet
converges with no device overcommitted."""

from pathlib import Path

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
