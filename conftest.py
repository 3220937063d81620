"""Fixtures every test directory shares (pytest loads a rootdir conftest for all).

The upstream CRDs every rendered object is validated against live in the shared
directory beside this checkout (`../shared/crds`), or wherever MODELPLANE_CRDS
points. Without them the validating tests skip on a laptop, and fail under CI,
where a skipped validation would pass unnoticed.
"""

import os
from pathlib import Path

import pytest
from hypothesis import settings

from modelplane_cli.schema import ManifestValidator
from modelplane_cli.schema.manifests import reference_crd_directory

ROOT = Path(__file__).resolve().parent

# Speed goals live in benchmarks, so no property test has a deadline. Under CI the
# examples are derandomized: a run is reproducible, and a red one can be replayed.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def manifest_validator() -> ManifestValidator:
    """Validates CRD kinds (upstream CRDs and Modelplane's XRDs) and built-in kinds."""
    crds = reference_crd_directory()
    if crds is None:
        message = (
            "the upstream CRDs are not beside this checkout (../shared/crds or MODELPLANE_CRDS)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return ManifestValidator.from_directories(crds, ROOT / "apis")
