"""`--fail-on warning` fails on Warnings that stand, not on ones a later round resolved."""

from __future__ import annotations

from pathlib import Path

from .cli import Fleet, modelplane


def test_concurrent_serving_example_passes_fail_on_warning(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "fleet", "catalog", "serving")

    run = modelplane("render", "--concurrent", "--fail-on", "warning", repo.root)

    assert (run.code, run.errors()) == (0, []), run.err
    # The first round's warnings are history: counted in the summary, not listed.
    assert "ClusterNotConnected" not in run.out
    assert "WARNINGS\nNone in the last round.\n(" in run.out
    assert "earlier warnings, no longer raised in the last round" in run.out


def test_the_summary_lists_only_warnings_the_last_round_raised(tmp_path: Path) -> None:
    """rev-ml F4: a ModelService weighting a missing deployment. Its external
    endpoint is pending its BackendTLSPolicy in the first round only; the final
    round routes to it, so the summary must not say it gets no traffic."""
    repo = Fleet(tmp_path / "fleet", "catalog", "serving")
    repo.replace(
        "serving/models.yaml", "deployment: {name: qwen-l4}", "deployment: {name: qwen-l5}"
    )

    run = modelplane("render", repo.root)

    warnings = run.out.split("\nWARNINGS\n", 1)[1].splitlines()
    assert [line.split()[:3] for line in warnings[1:-1]] == [
        ["ModelService", "chat-team/chat", "DeploymentNotFound"]
    ]
    assert warnings[-1] == (
        "(1 earlier warning, no longer raised in the last round: -o yaml lists every Event)"
    )
    assert "TLSPolicyPending" not in run.out
    # The event itself is kept, as a cluster keeps it.
    events = modelplane("render", repo.root, "-o", "yaml").objects
    assert [e["reason"] for e in events if e["kind"] == "Event" and e["type"] == "Warning"] == [
        "DeploymentNotFound",
        "TLSPolicyPending",
    ]


def test_a_warning_that_stands_still_fails(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "fleet", "catalog", "serving")
    repo.replace("serving/models.yaml", "replicas: 1", "replicas: 40")

    run = modelplane("render", "--concurrent", "--fail-on", "warning", repo.root)

    assert run.code == 1
    assert any("Warning InsufficientCapacity" in line for line in run.errors()), run.err
