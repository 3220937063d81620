"""How long a cache stays on a cluster once nothing uses it.

A cache is kept on a cluster while a placed replica uses it or the ModelCache's
clusterSelector picks the cluster. When neither holds any more it is marked
unused (`unusedSince`, in the ModelCache's status: a function keeps no state of
its own) and removed once the cluster's retention has passed; a user coming back
within it finds the weights still warm. A cache in use is never removed.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from modelplane.fleet.health import format_time, parse_time


@dataclass(frozen=True)
class Use:
    """Whether a cache stays on one cluster, and since when it has been unused."""

    keep: bool
    unused_since: str | None
    """RFC 3339, set while the cache is kept only because its retention has not passed."""


def keeps(
    used: bool, selected: bool, unused_since: str | None, retention: timedelta, now: datetime
) -> Use:
    """Whether a cache already on a cluster stays there.

    `used`: a placed replica uses it; `selected`: the clusterSelector picks the
    cluster; `unused_since`: what status recorded before.
    """
    if used or selected:
        return Use(True, None)
    since = parse_time(unused_since) if unused_since else None
    if since is None:
        since = now
    if now - since >= retention:
        return Use(False, format_time(since))
    return Use(True, format_time(since))
