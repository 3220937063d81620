"""The workload-cluster guide lists every component as the registries pin it."""

import re
from pathlib import Path

import pytest

from modelplane.stack import all_components

GUIDE = (
    Path(__file__).resolve().parent.parent / "docs" / "guides" / "preparing-a-workload-cluster.md"
)


def rows() -> dict[str, str]:
    text = GUIDE.read_text()
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", text, re.M)}


@pytest.mark.parametrize("key", sorted(all_components()))
def test_each_component_is_in_the_guide_at_its_pinned_version(key: str) -> None:
    component = all_components()[key]
    row = rows().get(key)
    assert row is not None, f"the guide has no row for {key}"
    assert f"`{component.version}`" in row
    for release in component.releases:
        assert f"`{release.chart.name}`" in row
        assert f"`{release.namespace}`" in row
        repository = release.chart.repository or release.chart.url.split("/download/")[0]
        assert repository.rstrip("/") in row
