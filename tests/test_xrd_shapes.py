"""One title, one shape: a sub-schema the XRDs share is written alike in each."""

from pathlib import Path

import pytest
import yaml

XRDS = sorted((Path(__file__).resolve().parent.parent / "apis").glob("*/definition.yaml"))


def _titled(node: object, title: str) -> list[object]:
    """Every sub-schema of `node` titled `title`."""
    found: list[object] = []
    if isinstance(node, dict):
        if node.get("title") == title:
            found.append(node)
        for value in node.values():
            found.extend(_titled(value, title))
    elif isinstance(node, list):
        for item in node:
            found.extend(_titled(item, title))
    return found


@pytest.mark.parametrize("title", ["Device", "Topology", "DeviceSelector"])
def test_a_titled_shape_is_one_shape_across_xrds(title: str) -> None:
    """A title names one shape: the generated models hold one class for it, and a
    published pool's devices are exactly what the class declares."""
    shapes = [s for path in XRDS for s in _titled(yaml.safe_load(path.read_text()), title)]
    assert len(shapes) >= 2
    assert all(shape == shapes[0] for shape in shapes)
