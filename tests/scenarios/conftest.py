"""Fixtures for the scenarios: one renderer, the main fleet and a fresh repository's
running world rendered once per session; a fleet repository per test, for the CI
previews."""

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


@pytest.fixture(scope="session")
def serving(renderer: Renderer) -> Fleet:
    """examples/serving (one address across clusters), rendered to its fixed point."""
    rendered = renderer.paths("catalog", "serving")
    assert rendered.result.ok, rendered.result.errors
    return rendered


@pytest.fixture
def repo(tmp_path: Path) -> cli.Fleet:
    """A fleet repository: the example catalog and fleet, as files to edit."""
    return cli.Fleet(tmp_path / "my-fleet", "catalog", "fleet")


@pytest.fixture(scope="session")
def unedited_world(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`render -o yaml` of a fresh fleet repository, rendered once per session: every
    `repo` starts as the same files, and render is deterministic."""
    root = tmp_path_factory.mktemp("unedited") / "my-fleet"
    rendered = cli.modelplane("render", cli.Fleet(root, "catalog", "fleet").root, "-o", "yaml")
    assert rendered.code == 0, rendered.err
    # Shared between repositories only because nothing in it names where it was read.
    assert str(root) not in rendered.out
    return rendered.out


@pytest.fixture
def world(repo: cli.Fleet, unedited_world: str, tmp_path: Path) -> Path:
    """The repository's running world, as `render -o yaml` writes it (before the test
    edits the repository)."""
    path = tmp_path / "world.yaml"
    path.write_text(unedited_world)
    return path
