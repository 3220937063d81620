"""Session fixtures for the scenarios: one renderer, the main fleet rendered once."""

import pytest

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
