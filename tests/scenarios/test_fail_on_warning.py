"""`--fail-on warning` fails on Warnings that stand, not on ones a later round resolved."""

from __future__ import annotations

from pathlib import Path

from .cli import Fleet, modelplane


def test_concurrent_serving_example_passes_fail_on_warning(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "fleet", "catalog", "serving")

    run = modelplane("render", "--concurrent", "--fail-on", "warning", repo.root)

    assert (run.code, run.errors()) == (0, []), run.err
    # The first round's warnings are still history in the summary.
    assert "ClusterNotConnected" in run.out


def test_a_warning_that_stands_still_fails(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "fleet", "catalog", "serving")
    repo.replace("serving/models.yaml", "replicas: 1", "replicas: 40")

    run = modelplane("render", "--concurrent", "--fail-on", "warning", repo.root)

    assert run.code == 1
    assert any("Warning InsufficientCapacity" in line for line in run.errors()), run.err
