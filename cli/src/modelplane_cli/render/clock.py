"""The render clock: the one "now" every function of a render sees.

A function that judges how long something has lasted (how long a cluster's
Objects have failed to sync) reads now from the request context
(`modelplane.ai/now`), never from the wall clock, so a preview is the same on
every run. The render fixes it once, before the first round:

- `--now TIME` (RFC 3339) when given;
- else the latest time the input world records (a condition's
  `lastTransitionTime`, an object's `creationTimestamp`): the moment a live
  export was taken, as far as the world can tell;
- else `EPOCH`, for a world that records no time at all.

Rounds do not advance it: a render previews what the control plane does at one
moment, however many reconciles that takes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from modelplane.fleet.health import format_time, parse_time

EPOCH: Final = "2000-01-01T00:00:00Z"


def parse_now(value: str) -> str:
    """`--now`, checked and normalised; ValueError when it is not an RFC 3339 time."""
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError(f"{value!r} is not an RFC 3339 time (e.g. 2026-12-01T10:00:00Z)")
    return format_time(parsed)


def _times(obj: Mapping[str, Any]) -> Iterable[datetime]:
    metadata = obj.get("metadata")
    if isinstance(metadata, Mapping):
        created = parse_time(metadata.get("creationTimestamp"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        if created is not None:
            yield created
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    for condition in conditions if isinstance(conditions, list) else []:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(condition, Mapping):
            moment = parse_time(condition.get("lastTransitionTime"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            if moment is not None:
                yield moment


def render_clock(objects: Iterable[Mapping[str, Any]], fixed: str | None = None) -> str:
    """The render's now: `fixed` when given, else the world's latest time, else EPOCH."""
    if fixed is not None:
        return fixed
    latest = max((t for obj in objects for t in _times(obj)), default=None)
    return EPOCH if latest is None else format_time(latest)
