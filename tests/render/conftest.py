"""Fixtures the engine tests share."""

from pathlib import Path

import pytest

from .support import write_apis


@pytest.fixture
def apis_dir(tmp_path: Path) -> Path:
    """The small test API of `support`, written for one test."""
    return write_apis(tmp_path)
