"""The figures recorded before, printed beside new ones (`--baseline FILE`).

`make bench` passes `bench/baseline.json`: the figures `docs/performance.md`
records for `bench call` and `bench render`, one JSON object per measured size.
A result whose bench and size (clusters, replicas or deployments) match an entry
gets that entry's figures under "before", so one line shows both. The file is
updated by hand when docs/performance.md records new figures; a size it lacks
prints no "before".
"""

import argparse
import json
from pathlib import Path
from typing import Any

# What names a measurement's size; every other field of an entry is a figure.
_SIZE_FIELDS = ("bench", "clusters", "replicas", "deployments")


class BaselineError(ValueError):
    """The baseline file cannot be read or is not a list of JSON objects."""


def add_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help='JSON list of earlier figures; a matching one is printed as "before"',
    )


def load(path: Path) -> list[dict[str, Any]]:
    try:
        entries: object = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise BaselineError(f"baseline {path} is not a JSON list of objects")
    return [dict(e) for e in entries]  # pyright: ignore[reportUnknownArgumentType]


def with_before(result: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """`result` with the figures of the entry of the same bench and size as "before"."""
    size = {k: result.get(k) for k in _SIZE_FIELDS}
    for entry in entries:
        if {k: entry.get(k) for k in _SIZE_FIELDS} == size:
            before = {k: v for k, v in entry.items() if k not in _SIZE_FIELDS}
            return {**result, "before": before}
    return result
