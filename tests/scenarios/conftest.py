"""Fixtures for the scenarios: one renderer and the main fleet rendered once per
session; a fleet repository and its running world per test, for the CI previews."""

from pathlib import Path

import pytest

from . import cli
from .fleets import Fleet, Renderer


@pytest.fixture(scope="session")
def renderer() -> Renderer:
    return Renderer()


@pytest.fixture(scope="session")
def fleet(renderer: Renderer) -> Fleet:
    """The main example fleet, rendered to its fixed point."""
    rendered = renderer.paths("catalog", "fleet")
    assert rendered.result.ok, rendered.result.errors
    return rendered


@pytest.fixture
def repo(tmp_path: Path) -> cli.Fleet:
    """A fleet repository: the example catalog and fleet, as files to edit."""
    return cli.Fleet(tmp_path / "my-fleet", "catalog", "fleet")


@pytest.fixture
def world(repo: cli.Fleet, tmp_path: Path) -> Path:
    """The repository's running world, as `render -o yaml` writes it."""
    rendered = cli.modelplane("render", repo.root, "-o", "yaml")
    assert rendered.code == 0, rendered.err
    path = tmp_path / "world.yaml"
    path.write_text(rendered.out)
    return path
