"""Every field of every XRD is documented on its kind's page under docs/api/."""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
XRDS = sorted((ROOT / "apis").glob("*/definition.yaml"))


def field_paths(schema: dict[str, Any], prefix: str) -> Iterator[str]:
    """Documentable paths: objects' properties, list items as `[]`, maps as `.<key>`."""
    for name, child in sorted(schema.get("properties", {}).items()):
        path = f"{prefix}.{name}" if prefix else name
        yield path
        yield from field_paths(child, path)
        if child.get("type") == "array":
            yield from field_paths(child.get("items", {}), f"{path}[]")
        # Free-form maps (attributes, capacity) are documented as the map itself.


def documented_patterns(page: str) -> list[re.Pattern[str]]:
    """Backticked paths in a table's first column; `<anything>` stands for one path
    segment, and in `a.b.c`, `.d.e` the dotted ones are relative to `a.b`."""
    patterns: list[re.Pattern[str]] = []
    for cell in re.findall(r"^\| ([^|]+) \|", page, flags=re.MULTILINE):
        paths = re.findall(r"`([^`]+)`", cell)
        parent = paths[0].rsplit(".", 1)[0] if paths else ""
        for written in paths:
            path = parent + written if written.startswith(".") else written
            # re.escape leaves < and > alone, so a <placeholder> survives escaping.
            escaped = re.sub(r"<[^>]+>", "[^.]+", re.escape(path))
            patterns.append(re.compile(f"^{escaped}$"))
    return patterns


@pytest.mark.parametrize("definition", XRDS, ids=[p.parent.name for p in XRDS])
def test_every_field_is_documented(definition: Path) -> None:
    xrd = yaml.safe_load(definition.read_text())
    kind = xrd["spec"]["names"]["kind"]
    page = (ROOT / "docs" / "api" / f"{kind.lower()}.md").read_text()
    patterns = documented_patterns(page)
    schema = xrd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    paths = list(field_paths(schema, ""))
    documented = {path for path in paths if any(p.match(path) for p in patterns)}
    # An object is documented through its documented fields.
    undocumented = [
        path
        for path in paths
        if path not in documented
        and not any(other.startswith((f"{path}.", f"{path}[]")) for other in documented)
    ]
    assert not undocumented, f"docs/api/{kind.lower()}.md lacks: {undocumented}"
