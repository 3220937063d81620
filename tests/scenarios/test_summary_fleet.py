"""The summary says why each replica is where it is, what each cluster has left, and
what a Managed stack installs."""

from __future__ import annotations

from pathlib import Path

from modelplane_cli.render.fleet_tables import DEFAULT_WHY, why_here
from modelplane_cli.render.summary import table

from .cli import EXAMPLES, Fleet, modelplane


def _section(out: str, title: str) -> list[str]:
    blocks = [b for b in out.split("\n\n") if b.startswith(title)]
    return [line for b in blocks for line in b.splitlines()[2:]]


def test_the_summary_shows_why_here_and_capacity() -> None:
    run = modelplane("render", EXAMPLES / "catalog", EXAMPLES / "fleet")

    assert run.code == 0, run.err
    why = _section(run.out, "WHY HERE")
    assert len(why) == 5  # every replica of the three deployments
    assert all(line.endswith(DEFAULT_WHY) for line in why)
    capacity = _section(run.out, "CAPACITY")
    assert [line.split() for line in capacity] == [
        ["prod-eu-west", "l4", "l4-1x", "8", "gpu", "8", "2", "6"],
        ["prod-eu-west", "h100", "h100-8x", "2", "gpu", "16", "16", "0"],
        ["prod-us-east", "h100", "h100-8x", "4", "gpu", "32", "32", "0"],
        ["prod-us-east", "h200", "h200-8x", "2", "gpu", "16", "8", "8"],
    ]


def test_why_here_quotes_the_scheduler_and_marks_kept_replicas() -> None:
    deployment = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "chat", "namespace": "ml"},
        "status": {
            "placements": [
                {"replica": "chat-a", "cluster": "east", "pools": {"workers": "h100"}},
                {"replica": "chat-b", "cluster": "west", "pools": {"workers": "l4"}},
            ]
        },
    }
    event = {
        "kind": "Event",
        "reason": "ReplicaPlaced",
        "involvedObject": {"kind": "ModelDeployment", "name": "chat", "namespace": "ml"},
        "message": 'Pipeline step "compose-model-deployment": Placed replica chat-b on cluster '
        "west (pool l4): best fit: l4 is the least capable with room",
    }

    text = why_here([deployment], [event], table)

    assert text.splitlines()[2:] == [
        "chat-a   east     workers=h100  kept where it runs (placed before this render)",
        "chat-b   west     workers=l4    best fit: l4 is the least capable with room",
    ]


def test_a_managed_stack_shows_its_releases(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "fleet", "catalog", "schedulers/models.yaml", "stack")

    run = modelplane("render", repo.root)

    releases = _section(run.out, "RELEASES")
    assert releases, run.out
    assert {line.split()[0] for line in releases} == {"managed-kserve"}
    charts = {line.split()[2] for line in releases}
    assert {"cert-manager", "kueue", "lws", "ai-gateway-helm"} <= charts, releases
    assert len(releases) == 11
