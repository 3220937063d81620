"""Fixtures shared by the schema tests."""

from __future__ import annotations

import pytest

from modelplane.schema import SchemaRegistry

from .support import CRDS


@pytest.fixture(scope="session")
def crd_registry() -> SchemaRegistry:
    """Every upstream CRD in shared/crds, loaded once for the session."""
    if not CRDS.is_dir():
        pytest.skip("the upstream CRDs (shared/crds) are not beside this checkout")
    return SchemaRegistry.from_files(sorted(CRDS.glob("*.yaml")))
