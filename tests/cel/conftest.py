"""The google/cel-spec conformance cases, shared by the conformance tests.

They live in the shared directory beside this checkout
(`../shared/conformance/cel-spec/cel_spec.jsonl`), or wherever MODELPLANE_CEL_SPEC
points (the directory or the file). Without them the conformance tests skip on a
laptop and fail under CI, where a skipped conformance run would pass unnoticed:
the same rule as the upstream CRDs in the root conftest.
"""

import json
import os
from pathlib import Path
from typing import Any

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
FILE_NAME = "cel_spec.jsonl"


def cel_spec_file() -> Path | None:
    """The conformance file: MODELPLANE_CEL_SPEC, else the shared directory; None if absent."""
    configured = os.environ.get("MODELPLANE_CEL_SPEC")
    candidate = (
        Path(configured) if configured else CHECKOUT.parent / "shared" / "conformance" / "cel-spec"
    )
    if candidate.is_dir():
        candidate = candidate / FILE_NAME
    return candidate if candidate.is_file() else None


@pytest.fixture(scope="session")
def cel_spec_cases() -> list[dict[str, Any]]:
    """Every case of the conformance file, in file order."""
    path = cel_spec_file()
    if path is None:
        message = (
            "the cel-spec conformance cases are not beside this checkout "
            "(../shared/conformance/cel-spec or MODELPLANE_CEL_SPEC)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
