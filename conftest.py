"""Fixtures every test directory shares (pytest loads a rootdir conftest for all).

The upstream CRDs every rendered object is validated against are found by
`modelplane_cli.schema.upstream.reference_crd_directory` (`.crds/` from `make
crds`, else MODELPLANE_CRDS, else `../shared/crds`). Tests that need them ask for
`manifest_validator` or `reference_crds`, or are marked `needs_crds`. Without the
CRDs the run fails before any test runs, on a laptop as in CI: a validation
skipped would pass unnoticed.
"""

import gc
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from modelplane_cli.schema import ManifestValidator
from modelplane_cli.schema.upstream import missing_crds_message, reference_crd_directory

ROOT = Path(__file__).resolve().parent
_CRD_FIXTURES = frozenset({"manifest_validator", "reference_crds"})

# Speed goals live in benchmarks, so no property test has a deadline or fails for
# generating slowly on a loaded machine. Under CI the examples are derandomized: a
# run is reproducible, and a red one can be replayed.
_UNTIMED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", _UNTIMED)
settings.register_profile("ci", _UNTIMED, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Every process the suite starts (the CLI, function servers and their workers, the
# packaging test's venv) writes and reuses Python's bytecode cache, as a user's
# Python does: with PYTHONDONTWRITEBYTECODE set (this workplace sets it) each one
# compiled every module it imported from source, 1-2 CPU seconds a process. Popped
# before pytest-xdist starts its workers, so they inherit it too.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


# CPython's cyclic collector runs its youngest generation once 700 more container
# objects are allocated than freed. The suite's renders and fuzzers keep most of what
# they build until they end, so passes come often, find few cycles, and each older pass
# walks everything a worker keeps (the session fixtures, the CRD schemas, every
# module). Rarer passes cut 7-9% of the whole suite's CPU, 15% of the scenario, render
# and function tests' (docs/performance.md, seventh session). Cycles are still
# collected, later; no test depends on when (the tests of the functions' and the
# render's own pauses check that the collector is on or off, not how often it runs).
_YOUNG_PASS_EVERY = 20_000  # allocations
_OLDER_PASSES = (50, 100)


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(_YOUNG_PASS_EVERY, *_OLDER_PASSES)
    config.addinivalue_line(
        "markers", "needs_crds: validates against the upstream CRDs beside the checkout"
    )


def _needs_crds(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    return bool(names & _CRD_FIXTURES) or item.get_closest_marker("needs_crds") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if reference_crd_directory() is not None:
        return
    needing = [item for item in items if _needs_crds(item)]
    if needing:
        raise pytest.UsageError(f"{len(needing)} tests cannot run: {missing_crds_message()}")


@pytest.fixture(scope="session")
def reference_crds() -> Path:
    """The directory of upstream CRDs (collection fails without it)."""
    crds = reference_crd_directory()
    assert crds is not None, missing_crds_message()
    return crds


@pytest.fixture(scope="session")
def manifest_validator(reference_crds: Path) -> ManifestValidator:
    """Validates CRD kinds (upstream CRDs and Modelplane's XRDs) and built-in kinds."""
    return ManifestValidator.from_directories(reference_crds, ROOT / "apis")
