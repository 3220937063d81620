"""When a download that failed for good is tried again.

A failed attempt is replaced by the next one (a new Job or LocalModelNamespaceCache,
which resumes what was downloaded), but not at once: a mistyped repository, missing
credentials or storage the downloader cannot write fail the same way every time, and
each attempt is pods and requests to the source. So attempt N+1 starts no sooner
than `backoff(N)` after attempt N failed: 1, 2, 4 ... minutes, at most an hour.
There is no last attempt: a cause fixed outside the ModelCache (a Secret's content,
the volume's permissions) is picked up within the hour, and meanwhile the cache
stays Failed with the reason (`CacheDownloadFailed`), so nothing is hidden.

When it failed: a Job's `Failed` condition says (`lastTransitionTime`); a
LocalModelNamespaceCache does not, so its Object's creation is taken instead (its
attempt may have run long, so the wait is at most as long, never longer). With
neither the next attempt starts at once, as a function keeps no time of its own.
"""

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from modelplane.core.kinds.base import mapping
from modelplane.core.observed import conditions
from modelplane.fleet.health import parse_time

FIRST_BACKOFF: Final = timedelta(minutes=1)
MAX_BACKOFF: Final = timedelta(hours=1)


def backoff(attempt: int) -> timedelta:
    """How long after attempt `attempt` (1 for the first) failed the next one starts."""
    doublings = min(max(attempt - 1, 0), 6)  # 2**6 minutes already passes the cap
    return min(FIRST_BACKOFF * 2**doublings, MAX_BACKOFF)


def failed_at(read_back: Mapping[str, Any] | None, observed: Mapping[str, Any]) -> datetime | None:
    """When a failed download object failed: its `Failed` condition's time, else when
    its Object (`observed`) was created; None when neither is known."""
    failed = next(
        (c for c in conditions(read_back) if c.type == "Failed" and c.status == "True"), None
    )
    when = parse_time(failed.lastTransitionTime) if failed is not None else None
    if when is None:
        when = parse_time(mapping(observed.get("metadata")).get("creationTimestamp"))
    return when


def retry_at(
    attempt: int, read_back: Mapping[str, Any] | None, observed: Mapping[str, Any]
) -> datetime | None:
    """When the attempt after `attempt` may start; None: at once (no time is known)."""
    when = failed_at(read_back, observed)
    return None if when is None else when + backoff(attempt)
