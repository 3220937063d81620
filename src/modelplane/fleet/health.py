"""Whether a workload cluster is reachable: the `Reachable` condition of an InferenceCluster.

Two kinds of evidence, both provider-kubernetes Objects sent through the cluster's
ProviderConfig. The probes are those the cluster composes itself (the Observe-only
prerequisite observers, the gateway): whether the connection works at all. The
replica Objects are those its ModelReplicas compose: whether the cluster still
takes what runs there, and the only evidence on a cluster with no probe. An Object
*fails to sync* when its `Synced` condition is False for a reason that is not an
answer from the cluster: an absent object (an observer finding nothing) or a
refused manifest means the cluster answered.

Each kind is unreachable when every observed Object of it fails to sync and the most
recent of their failures began at least `GRACE` before now: a blip, or a single
Object a permission keeps out, never evacuates a cluster. A failure with no
`lastTransitionTime` has no known start and never counts as past the grace.
`combine` takes the worse verdict. Messages count Objects, never name them, so
they stay short on a cluster with thousands.

"Now" is an input: the function reads it from the request (the render engine
fixes it, so previews are deterministic) or, in a live control plane, the clock.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from modelplane_models.shapes import Condition

from modelplane.core.observed import find_condition
from modelplane.core.vocabulary import Reason
from modelplane.stack.observation import ABSENT_MESSAGES

GRACE: Final = timedelta(minutes=5)
"""How long every probe must fail before the cluster is unreachable."""

# How crossplane-runtime reports a manifest the cluster refused: the cluster answered.
_ANSWERED: Final = (*ABSENT_MESSAGES, "cannot create object", "cannot apply object")


@dataclass(frozen=True)
class Reachability:
    """The verdict: `reachable` None while failing within the grace (Unknown)."""

    reachable: bool | None
    message: str
    reason: str = ""
    """The condition's reason; empty: the one its status implies (`reason_for`)."""


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 time as the API server writes it, in UTC, or None. A time given with
    another offset (a hand-written world) is the same instant in UTC, so what is
    stamped from it (`format_time`) names that instant."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else None


def format_time(moment: datetime) -> str:
    """`moment` as the API server writes a time: RFC 3339 in UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _failing_since(synced: Condition | None) -> tuple[bool, datetime | None]:
    """Whether an Object whose `Synced` condition is `synced` fails to sync, and since
    when (None: not recorded)."""
    if synced is None or synced.status != "False":
        return False, None
    message = synced.message or ""
    if any(words in message for words in _ANSWERED):
        return False, None
    return True, parse_time(synced.lastTransitionTime)


def _judge(synced: Sequence[Condition | None], now: datetime, noun: str) -> Reachability:
    """Whether Objects (not none) with these `Synced` conditions fail to sync together,
    and since when."""
    failing = [_failing_since(s) for s in synced]
    count = sum(1 for fails, _ in failing if fails)
    if count < len(synced):
        return Reachability(
            True, f"{len(synced) - count} of {len(synced)} {noun} reach the cluster"
        )
    starts = [since for _, since in failing]
    if any(since is None for since in starts):
        return Reachability(
            None,
            f"none of {len(synced)} {noun} syncs; when that began is not recorded",
        )
    began = max(since for since in starts if since is not None)
    stamp = format_time(began)
    if now - began < GRACE:
        return Reachability(
            None,
            f"none of {len(synced)} {noun} has synced since {stamp}; "
            f"unreachable once that lasts {int(GRACE.total_seconds())}s",
        )
    return Reachability(False, f"none of {len(synced)} {noun} has synced since {stamp}")


def assess(probes: Sequence[Mapping[str, Any] | None], now: datetime) -> Reachability:
    """The cluster's health from its probes' observed states (None: not observed yet)."""
    observed = [p for p in probes if p is not None]
    if not observed:
        return Reachability(True, "no Object has synced or failed yet")
    # Each Object's conditions read once (reading them validates every entry).
    verdict = _judge([find_condition(p, "Synced") for p in observed], now, "Objects")
    if verdict.reachable is False:
        return Reachability(
            False,
            f"{verdict.message}: the cluster is unreachable; its replicas are replaced elsewhere",
            Reason.CLUSTER_UNREACHABLE,
        )
    return verdict


def assess_replicas(
    objects: Sequence[Mapping[str, Any] | None], now: datetime
) -> Reachability | None:
    """The cluster's health from its replicas' observed Objects; None when none is observed.

    The same rule as for the probes, over the Objects ModelReplicas compose through
    the cluster's ProviderConfig: every one of them failing for the grace is a
    cluster that no longer takes its replicas' changes, even while the probes sync.
    """
    found = (find_condition(o, "Synced") for o in objects if o is not None)
    synced = [s for s in found if s is not None]
    if not synced:
        return None
    verdict = _judge(synced, now, "replica Objects")
    if verdict.reachable is True:
        # No count: it would change with every replica placed or removed, rewriting
        # the cluster's status (and waking every reader of the fleet) for no news.
        return Reachability(True, "its replicas' Objects reach the cluster")
    if verdict.reachable is False:
        return Reachability(
            False,
            f"{verdict.message}: the cluster takes none of its replicas' Objects; "
            "its replicas are replaced elsewhere",
            Reason.REPLICA_OBJECTS_FAILING,
        )
    return verdict


def combine(connection: Reachability, replicas: Reachability | None) -> Reachability:
    """The cluster's verdict: False when either is, Unknown when either is, else True.

    The message names what decided it first, and the other verdict after it.
    """
    if replicas is None:
        return connection
    order = {False: 0, None: 1, True: 2}
    first, second = sorted((connection, replicas), key=lambda h: order[h.reachable])
    return Reachability(first.reachable, f"{first.message}; {second.message}", first.reason)


def reason_for(health: Reachability) -> str:
    """The `Reachable` condition's reason for a verdict."""
    if health.reason:
        return health.reason
    return {
        True: Reason.CLUSTER_REACHABLE,
        None: Reason.SYNC_FAILING,
        False: Reason.CLUSTER_UNREACHABLE,
    }[health.reachable]
