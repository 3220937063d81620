"""Break after unroute: a serving replica the decision removes is unrouted first.

A ModelService reads the namespace's ModelEndpoints only when it reconciles (in
Crossplane v2.3 required resources are not watched: on its TTL, 60 s), so a
replica deleted in the reconcile that drops its ModelEndpoint would keep its share
of every route to it, sent to a cluster route that no longer exists, for up to a
minute. Instead, a replica the decision removes (retired by a rollout, moved,
scaled down, its pool gone) that serves and has a ModelEndpoint *retires*: its
ModelEndpoint goes at once, its ModelReplica is re-emitted exactly as it runs,
and `status.retiring` records since when. It is deleted at the first reconcile
where one of these holds:

- no ModelService of the namespace lists it in `status.endpoints` (the route that
  service composed no longer sends to it);
- it no longer serves (nothing routed to it is served anyway);
- a new replica of the deployment preempts it (the devices are promised);
- it has retired for `HOLD`, so a ModelService that never reconciles (its
  gateway gone, its function down) cannot keep a replica and its devices.

A retiring replica is no longer the decision's (`adapt.existing_replicas`,
`retiring`): not kept, counted or removed again, but charged as another
deployment's replica is, since it holds its devices until it is deleted, and its
name is never given to a new replica (`scheduling.fill`), so a scale-up while it
retires places a new replica beside it. A replica that does not serve, or never
had a ModelEndpoint, is removed at once.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelService
from modelplane_models.model_deployment import RetiringStatus

from compose_model_deployment.endpoints import endpoint_key
from compose_model_deployment.fleet import recorded_cluster
from compose_model_deployment.statuses import Statuses
from modelplane.core.kinds.base import mapping
from modelplane.core.vocabulary import API_VERSION, MODEL_REPLICA, MODEL_SERVICE, Reason
from modelplane.fleet.health import format_time, parse_time
from modelplane.scheduling import Decision
from modelplane.xfn import required
from modelplane.xfn.required import Required

SERVICES = "modelservices"
# Five ModelService TTLs: a healthy service drops an endpoint within one (60 s),
# and this deployment sees that within its own (60 s); the rest covers a service
# whose reconcile is queued or retried. Past it the replica goes even if a route
# still lists it: its devices are not held for a service that does not reconcile.
HOLD = timedelta(minutes=5)


def require_services(rsp: fnv1.RunFunctionResponse, composite: Mapping[str, Any]) -> None:
    """The ModelServices of the deployment's namespace: whether a route still sends
    to a retiring replica."""
    namespace = mapping(composite.get("metadata")).get("namespace")
    where = namespace if isinstance(namespace, str) else None
    required.require_all(rsp, SERVICES, API_VERSION, MODEL_SERVICE, where)


def recorded(composite: Mapping[str, Any], observed: Mapping[str, Any]) -> dict[str, str]:
    """`status.retiring` of the raw composite, by replica, for those still composed:
    when each was unrouted as recorded (perhaps not a time; `plan` reads it). Read
    from the raw composite, since what to require is decided before anything is
    parsed; an entry that names no composed ModelReplica is ignored."""
    entries = mapping(composite.get("status")).get("retiring")
    found: dict[str, str] = {}
    for entry in cast(list[Any], entries) if isinstance(entries, list) else []:
        fields = mapping(entry)
        name, since = fields.get("replica"), fields.get("since")
        composed = mapping(observed.get(name)) if isinstance(name, str) else {}
        if isinstance(name, str) and composed.get("kind") == MODEL_REPLICA:
            found[name] = since if isinstance(since, str) else ""
    return found


@dataclass(frozen=True)
class Retirement:
    """What becomes of the retiring replicas in one reconcile."""

    held: dict[str, datetime]
    """Replicas re-emitted as they run, unrouted, with since when."""
    started: tuple[str, ...]
    """Of `held`, those this decision removed."""
    released: dict[str, str]
    """Retiring replicas deleted now, with why."""

    def status(self, observed: Mapping[str, Any]) -> list[RetiringStatus] | None:
        entries = [
            RetiringStatus(
                replica=name,
                cluster=recorded_cluster(mapping(observed.get(name))),
                since=format_time(since),
            )
            for name, since in sorted(self.held.items())
        ]
        return entries or None

    def events(self) -> list[tuple[str, str]]:
        """(reason, message) of a Normal event for each replica that starts retiring
        and each deleted after retiring."""
        said = [
            (
                Reason.REPLICA_RETIRING,
                f"Unrouted replica {name}: its ModelEndpoint is removed, and it is deleted "
                f"once no ModelService routes to it (at most {_minutes(HOLD)})",
            )
            for name in self.started
        ]
        said.extend(
            (Reason.REPLICA_RETIRED, f"Deleted replica {name}, unrouted before: {why}")
            for name, why in sorted(self.released.items())
        )
        return said


def plan(
    decision: Decision,
    statuses: Statuses,
    before: Mapping[str, str],
    services: Required[ModelService] | None,
    deployment: str,
    now: datetime,
) -> Retirement:
    """Which replicas retire, stay retiring or are deleted now (the module's rules).
    `before` is what `recorded` read; `services` the namespace's ModelServices, None
    when they were not asked for (then no retiring replica is released for them)."""
    preempted = {name for r in decision.replicas for name in r.preempts}
    routed = _routed(services, deployment)
    held: dict[str, datetime] = {}
    released: dict[str, str] = {}
    started: list[str] = []
    candidates = dict(before)
    for name in starting(decision, statuses):
        if name not in candidates:
            candidates[name] = ""
            started.append(name)
    for name, since_text in sorted(candidates.items()):
        since = parse_time(since_text) or now
        why = _release(name, statuses, preempted, routed, now - since)
        if why is None:
            held[name] = since
        else:
            released[name] = why
    return Retirement(held, tuple(s for s in started if s in held), released)


def starting(decision: Decision, statuses: Statuses) -> list[str]:
    """The replicas the decision removes that serve and have a ModelEndpoint: those a
    route may send to, which retire instead of going at once. Not one another
    deployment preempts: its devices are promised (the scheduler charges the others,
    `scheduling.fill.leaving`)."""
    observed = statuses.observed
    wanted = {r.name for r in decision.replicas}
    return [
        r.name
        for r in decision.removed
        if r.name not in wanted
        and r.preempted_by is None
        and r.name in observed
        and endpoint_key(r.name) in observed
        and statuses.serves(r.name)
    ]


def _release(
    name: str,
    statuses: Statuses,
    preempted: set[str],
    routed: frozenset[str] | None,
    held_for: timedelta,
) -> str | None:
    # A status that cannot be read says nothing: `serves` would then ask whether its
    # ModelEndpoint is kept, which a retiring replica never has.
    if statuses.problem(name) is None and not statuses.serves(name):
        return "it no longer serves"
    if name in preempted:
        return "a new replica of this deployment preempts it"
    if held_for >= HOLD:
        return f"it has been unrouted for {_minutes(HOLD)}, the longest a route may hold it"
    if routed is not None and name not in routed:
        return "no ModelService of the namespace routes to it any more"
    return None


def _routed(services: Required[ModelService] | None, deployment: str) -> frozenset[str] | None:
    """The replicas of `deployment` some ModelService lists in `status.endpoints`; None
    when that cannot be told (not fetched, or a service that cannot be read)."""
    if services is None or not services.resolved or services.unreadable:
        return None
    return frozenset(_listed(services.items, deployment))


def _listed(services: Iterable[ModelService], deployment: str) -> Iterable[str]:
    for service in services:
        for backend in (service.status.endpoints if service.status else None) or ():
            if backend.deployment == deployment and backend.replica:
                yield backend.replica


def _minutes(span: timedelta) -> str:
    return f"{int(span.total_seconds() // 60)}m"
