"""Whether a workload cluster is reachable: the `Reachable` condition of an InferenceCluster.

Two kinds of evidence, both provider-kubernetes Objects sent through the cluster's
ProviderConfig. The probes are those the cluster composes itself (the Observe-only
prerequisite observers, the gateway): whether the connection works at all. The
replica Objects are those its ModelReplicas compose: whether the cluster still
takes what runs there, and the only evidence on a cluster with no probe. An Object
*fails to sync* when its `Synced` condition is False for a reason that is not an
answer from the cluster: an absent object (an observer finding nothing) or a
refused manifest means the cluster answered.

Each kind is unreachable when every observed Object of it has failed to sync, without
a break, for at least `GRACE`: a blip, or a single Object a permission keeps out,
never evacuates a cluster. When that all-failing state began is remembered, not
inferred afresh: crossplane-runtime re-stamps a condition's `lastTransitionTime`
whenever its message changes (`Condition.Equal` compares the message), and a dead
API server's transport error alternates between texts, so the latest transition
would restart the clock for the whole cluster on any one Object's new wording. The
caller publishes the start (`Reachability.since`, the InferenceCluster's
`status.reachability`) and hands it back on the next call while every Object keeps
failing. The first time the state is seen, its start is the latest
`lastTransitionTime` among the failing Objects (the moment the last of them joined
it), never later than now; now itself when one records none. So a cluster already
failing when this rule ships is judged from its Objects' own times, and is
unreachable at the latest `GRACE` after its first call. `combine` takes the worse
verdict. Messages count Objects, never name them, so
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
    since: datetime | None = None
    """When every Object began failing together, while they all fail: for the caller
    to publish and hand back (`assess`'s `since`)."""


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


def _began(carried: datetime | None, starts: Sequence[datetime | None], now: datetime) -> datetime:
    """When the all-failing state began: as carried from the last call, else the latest
    recorded start (now when one is not recorded); never later than now, so a clock
    ahead of ours cannot postpone the verdict."""
    if carried is not None:
        return min(carried, now)
    recorded = [since for since in starts if since is not None]
    if len(recorded) < len(starts):
        return now
    return min(max(recorded), now)


def _judge(
    synced: Sequence[Condition | None], now: datetime, noun: str, carried: datetime | None
) -> Reachability:
    """Whether Objects (not none) with these `Synced` conditions fail to sync together,
    and since when (`carried`: the start the last call published)."""
    failing = [_failing_since(s) for s in synced]
    count = sum(1 for fails, _ in failing if fails)
    if count < len(synced):
        return Reachability(
            True, f"{len(synced) - count} of {len(synced)} {noun} reach the cluster"
        )
    began = _began(carried, [since for _, since in failing], now)
    stamp = format_time(began)
    if now - began < GRACE:
        return Reachability(
            None,
            f"none of {len(synced)} {noun} has synced since {stamp}; "
            f"unreachable once that lasts {int(GRACE.total_seconds())}s",
            since=began,
        )
    return Reachability(
        False, f"none of {len(synced)} {noun} has synced since {stamp}", since=began
    )


def assess(
    probes: Sequence[Mapping[str, Any] | None], now: datetime, since: datetime | None = None
) -> Reachability:
    """The cluster's health from its probes' observed states (None: not observed yet);
    `since`: when they all began failing, as the last call found (`Reachability.since`)."""
    observed = [p for p in probes if p is not None]
    if not observed:
        return Reachability(True, "no Object has synced or failed yet")
    # Each Object's conditions read once (reading them validates every entry).
    verdict = _judge([find_condition(p, "Synced") for p in observed], now, "Objects", since)
    if verdict.reachable is False:
        return Reachability(
            False,
            f"{verdict.message}: the cluster is unreachable; its replicas are replaced elsewhere",
            Reason.CLUSTER_UNREACHABLE,
            verdict.since,
        )
    return verdict


def assess_replicas(
    objects: Sequence[Mapping[str, Any] | None], now: datetime, since: datetime | None = None
) -> Reachability | None:
    """The cluster's health from its replicas' observed Objects; None when none is observed.
    `since` as for `assess`.

    The same rule as for the probes, over the Objects ModelReplicas compose through
    the cluster's ProviderConfig: every one of them failing for the grace is a
    cluster that no longer takes its replicas' changes, even while the probes sync.
    """
    found = (find_condition(o, "Synced") for o in objects if o is not None)
    synced = [s for s in found if s is not None]
    if not synced:
        return None
    verdict = _judge(synced, now, "replica Objects", since)
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
            verdict.since,
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
