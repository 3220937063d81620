"""Racing with narrowed requirements: each deployment receives only the clusters its
clusterSelector's labels list and the replicas on them, yet two deployments whose
selectors differ but share a cluster still see each other's replicas there (listed
per cluster, as fresh as the whole fleet was), so a race converges with nothing
overcommitted; and a cluster that stops matching is still fetched by name, so its
replicas move make-before-break."""

from pathlib import Path

import pytest

from modelplane_cli import yamlio

from .cli import Fleet, modelplane
from .fleets import placed_clusters
from .manifests import h100_cluster, h100_model


def _selecting(**labels: str) -> str:
    pairs = ", ".join(f"{k}: {v}" for k, v in sorted(labels.items()))
    return f"  clusterSelector: {{matchLabels: {{{pairs}}}}}\n"


@pytest.mark.parametrize("concurrent", [False, True], ids=["sequential", "concurrent"])
def test_different_selectors_racing_for_a_shared_node(tmp_path: Path, concurrent: bool) -> None:
    """alpha lists clusters by region, beta by tier; only `shared` has both labels, one
    node. A decoy neither selects has room. Reconciled at the same moment both place
    on `shared`; the round after each finds the other's replica in `shared`'s list and
    precedence settles it alike: beta's, not serving yet, yields."""
    repo = Fleet(tmp_path / "race", "catalog")
    repo.path("race.yaml").write_text(
        h100_cluster("shared", 1, labels={"region": "us", "tier": "gold"})
        + h100_cluster("decoy", 3, labels={"region": "eu", "tier": "silver"})
        + h100_model("alpha", "team-a", spec=_selecting(region="us"))
        + h100_model("beta", "team-b", spec=_selecting(tier="gold"))
    )
    flags = ["--concurrent"] if concurrent else []

    run = modelplane("render", repo.root, *flags, "-o", "yaml")

    assert placed_clusters(run.objects) == {"alpha": ["shared"], "beta": []}
    assert not any("overcommitted" in e for e in run.errors())
    removals = [
        o["message"]
        for o in run.objects
        if o["kind"] == "Event" and o["reason"] == "ReplicaRemoved"
    ]
    if concurrent:
        (removed,) = removals
        assert "Removed replica beta-" in removed
        assert "yielded pool h100 to a replica in another namespace" in removed
    else:
        assert removals == []


def test_three_selecting_deployments_racing_for_the_last_node(tmp_path: Path) -> None:
    """As the unselective race (test_racing), with every deployment listing its clusters
    by label: four replicas on three nodes for a round, then the last by precedence
    yields."""
    repo = Fleet(tmp_path / "race", "catalog")
    gold = _selecting(tier="gold")
    models = [("incumbent", "team-0", 2), ("alpha", "team-a", 1), ("beta", "team-b", 1)]
    repo.path("race.yaml").write_text(
        h100_cluster("solo", 3, labels={"tier": "gold"})
        + h100_cluster("spare", 4, labels={"tier": "silver"})
        + "".join(h100_model(n, ns, replicas=r, spec=gold) for n, ns, r in models)
    )

    run = modelplane("render", repo.root, "--concurrent", "-o", "yaml")

    assert placed_clusters(run.objects) == {
        "alpha": ["solo"],
        "beta": [],
        "incumbent": ["solo", "solo"],
    }
    assert not any("overcommitted" in e for e in run.errors())


def test_a_cluster_that_stops_matching_hands_its_replica_over(tmp_path: Path) -> None:
    """The replica's cluster loses the label the deployment lists by: no longer listed,
    it is fetched by name, still exists, and the replica moves to the cluster that
    now matches, make-before-break (the old one goes once the new one is placed)."""
    repo = Fleet(tmp_path / "move", "catalog")
    model = h100_model("alpha", "team-a", spec=_selecting(tier="gold"))
    repo.path("fleet.yaml").write_text(
        h100_cluster("first", 1, labels={"tier": "gold"})
        + h100_cluster("second", 1, labels={"tier": "silver"})
        + model
    )
    settled = modelplane("render", repo.root, "-o", "yaml")
    assert settled.code == 0, settled.err
    assert placed_clusters(settled.objects) == {"alpha": ["first"]}
    world = tmp_path / "world.yaml"
    world.write_text(yamlio.dump_all([o for o in settled.objects if o["kind"] != "Event"]))
    repo.path("fleet.yaml").write_text(
        h100_cluster("first", 1, labels={"tier": "silver"})
        + h100_cluster("second", 1, labels={"tier": "gold"})
        + model
    )

    run = modelplane("render", repo.root, "--observed", world, "-o", "yaml")

    assert placed_clusters(run.objects) == {"alpha": ["second"]}
    events = [o for o in run.objects if o["kind"] == "Event"]
    placed = [e["message"] for e in events if e["reason"] == "ReplicaPlaced"]
    removed = [e["message"] for e in events if e["reason"] == "ReplicaRemoved"]
    assert any("on cluster second" in m for m in placed), placed
    (gone,) = removed
    # Moved because it no longer matches, once its replacement serves; were the cluster
    # not fetched, it would have been dropped as on a deleted cluster.
    assert "from cluster first: moved (cluster is no longer selected" in gone, gone
    assert gone.endswith("its replacement serves"), gone
