"""One reconcile of one composite, as Crossplane's XR reconciler performs it.

Select the Composition, observe the composed resources, run the pipeline, and
then either report why nothing was applied (a fatal result, a failed call, a
resource whose metadata cannot be rendered) or, as Crossplane v2.3's
`FunctionComposer.Compose` and `Reconciler.Reconcile` do: garbage-collect what is
no longer desired (a Usage-protected delete ends the reconcile there, silently),
record the references, apply each resource on its own (a refused one leaves the
composite not Synced), and write the composite's status (the functions' status
and conditions, Synced, and Ready), which its XRD's schema may refuse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from modelplane.core.vocabulary import LABEL_COMPOSITE, RESERVED_CONDITION_TYPES
from modelplane_cli.render import composed, garbage
from modelplane_cli.render.admission import Admission
from modelplane_cli.render.apis import Apis, CompositionSelectionError
from modelplane_cli.render.clock import EPOCH
from modelplane_cli.render.pipeline import REASON_COMPOSE, Condition, Event, run_pipeline
from modelplane_cli.render.runners import FunctionClient
from modelplane_cli.render.world import Obj, ObjectKey, View, World, annotations_of, fake_uid
from modelplane_cli.schema.errors import go_quote

REASON_SELECT_COMPOSITION = "SelectComposition"
REASON_FATAL_ERROR = "FatalError"
_FATAL_UNKNOWN_MESSAGE = (
    "A fatal error occurred before the status of this condition could be determined."
)
ANNOTATION_PAUSED = "crossplane.io/paused"
# A paused composite's Synced condition (crossplane-runtime `ReconcilePaused`) and the
# event recorded with it (`reasonPaused`, `reconcilePausedMsg` in the composite reconciler).
REASON_PAUSED = "ReconcilePaused"
_PAUSED_MESSAGE = "Reconciliation (including deletion) is paused via the pause annotation"
EVENT_PAUSED = "ReconciliationPaused"
_PAUSED_EVENT_MESSAGE = "Reconciliation is paused via the pause annotation"
# Every reconcile marks the watch circuit breaker's state first (`TypeResponsive`,
# apiextensions `conditions.go`). Render sends no watch events to trip it: always closed.
# Crossplane's words, not the vocabulary's: no function may set this type.
RESPONSIVE = "Responsive"
REASON_WATCH_CIRCUIT_CLOSED = "WatchCircuitClosed"
# Crossplane's resource.DefaultFirstN: how many names a condition message lists.
_FIRST_N = 3

ERR_COMPOSE = "cannot compose resources"
ERR_APPLY_STATUS = "cannot apply composite resource status"
SYNCED_OK = Condition("Synced", "True", "ReconcileSuccess")
READY_OK = Condition("Ready", "True", "Available")


@dataclass
class Report:
    """What one reconcile of a composite said: its events and, if it failed, why.

    `unsynced` names the composed resources the API server refused this time (the
    reconcile itself succeeded); `conflict` says the error was a refused delete,
    which Crossplane requeues without a trace; `ttl` is the pipeline's requeue interval in
    seconds (the smallest non-zero TTL its functions returned), None when none did.
    """

    key: ObjectKey
    events: list[Event] = field(default_factory=list[Event])
    error: str | None = None
    unsynced: list[str] = field(default_factory=list[str])
    ttl: float | None = None
    # The error was a Conflict (a Usage-protected delete), requeued silently.
    conflict: bool = False


async def reconcile(
    key: ObjectKey,
    world: World,
    apis: Apis,
    functions: FunctionClient,
    admission: Admission,
    *,
    snapshot: World | None = None,
    now: str = EPOCH,
    traced: Sequence[str] = (),
) -> Report | None:
    """Reconcile one composite, writing to `world`.

    Everything the reconcile reads (the composite, its composed resources, the
    resources its functions require) comes from `snapshot` when one is given, the
    world as it was when the round began; writes always go to `world`.
    """
    seen = snapshot or world
    stored = seen.get(key)
    if stored is None or key not in world:
        return None
    xr = _working_copy(stored)
    meta: Obj = xr["metadata"]
    meta.setdefault("uid", fake_uid(key))
    # Crossplane labels a root composite with its own name; nested ones inherit the root's.
    meta["labels"] = {LABEL_COMPOSITE: key.name, **(meta.get("labels") or {})}

    _set(xr, [Condition(RESPONSIVE, "True", REASON_WATCH_CIRCUIT_CLOSED)])
    if annotations_of(xr).get(ANNOTATION_PAUSED) == "true":
        _set(xr, [Condition("Synced", "False", REASON_PAUSED, _PAUSED_MESSAGE)])
        _store(world, xr)
        return Report(key, [Event("Normal", EVENT_PAUSED, _PAUSED_EVENT_MESSAGE)])

    try:
        composition = apis.composition_for(xr)
    except CompositionSelectionError as exc:
        message = f"cannot select Composition: {exc}"  # errSelectComp
        _set(xr, [Condition("Synced", "False", "ReconcileError", message)])
        _store(world, xr)
        return Report(key, [Event("Warning", REASON_SELECT_COMPOSITION, message)], message)

    observed, observe_errors = composed.observe(seen, xr)
    if observe_errors:
        # errGetExistingCDs, wrapping errAnonymousCD or render's own duplicate check.
        return _fail(world, xr, f"cannot get existing composed resources: {observe_errors[0]}")

    outcome = await run_pipeline(
        xr, composition, observed, seen, apis, functions, now=now, traced=traced
    )
    if outcome.error is not None:
        # Only a fatal result keeps what the steps said (`CompositionResult{Events,
        # Conditions}`); any other failure returns an empty result.
        if outcome.fatal:
            return _fail(world, xr, outcome.error, outcome.events, outcome.conditions)
        return _fail(world, xr, outcome.error)

    planned = composed.plan(xr, outcome.resources, observed, world, apis, admission)
    events = [*outcome.events, *planned.events]
    if planned.errors:
        # `Compose` returns `CompositionResult{}` at its first such error.
        return _fail(world, xr, planned.errors[0])

    collect_error = garbage.collect(world, observed, planned.objects)
    if collect_error is not None:
        # A refused delete is a Conflict, which Crossplane's reconciler requeues
        # silently: no event, no status write, Synced stays as it was.
        return Report(key, [], f"{ERR_COMPOSE}: {collect_error}", ttl=outcome.ttl, conflict=True)
    composed.references(world, xr, planned, admission)
    composed.apply(world, planned)
    unsynced = sorted(planned.refused)
    events.extend(
        Event(
            "Warning", REASON_COMPOSE, f"cannot apply composed resource {go_quote(name)}: {message}"
        )
        for name, message in sorted(planned.refused.items())
    )

    status: Obj = {k: v for k, v in (outcome.composite_status or {}).items() if k != "conditions"}
    status["conditions"] = list((xr.get("status") or {}).get("conditions") or [])
    xr["status"] = status
    _set(
        xr,
        drop_reserved_conditions(_status_conditions(outcome.composite_status), outcome.conditions),
    )
    unready = [name for name, resource in outcome.resources.items() if not resource.ready]
    _set(xr, [_synced(unsynced), _ready(outcome.composite_ready, unready)])
    xr["status"], refused = admission.admit_status(xr)
    if refused:
        # The status apply is refused, and so is the status update that follows it
        # (it carries the same status): nothing of this reconcile's status lands.
        message = f"{ERR_COMPOSE}: {ERR_APPLY_STATUS}: {composed.invalid(key, refused)}"
        return Report(key, [Event("Warning", REASON_COMPOSE, message)], message, ttl=outcome.ttl)
    _store(world, xr)

    # Crossplane's reconciler walks the composed resources (in its map's random
    # order; here by name) and records, for each, that it is not yet valid, then
    # that it is not yet ready. "Successfully composed resources" is only logged
    # since crossplane 667ac6eb2, so it is no event.
    for name in sorted(outcome.resources):
        if name in planned.refused:
            events.append(
                Event(
                    "Normal", REASON_COMPOSE, f"Composed resource {go_quote(name)} is not yet valid"
                )
            )
        if not outcome.resources[name].ready:
            events.append(
                Event(
                    "Normal", REASON_COMPOSE, f"Composed resource {go_quote(name)} is not yet ready"
                )
            )
    return Report(key, events, unsynced=unsynced, ttl=outcome.ttl)


def _working_copy(stored: View) -> Obj:
    """The composite as this reconcile may change it: its top level, metadata and status.

    A reconcile changes nothing deeper (conditions are replaced as a list, labels as
    a dict), so the rest is shared with the stored object, which is never changed
    in place, rather than deep-copied on every reconcile.
    """
    xr: Obj = dict(stored)
    xr["metadata"] = dict(stored.get("metadata") or {})
    status = stored.get("status")
    if isinstance(status, dict):
        xr["status"] = dict(cast(Obj, status))
    return xr


def _synced(unsynced: list[str]) -> Condition:
    if unsynced:
        return Condition(
            "Synced", "False", "ReconcileError", f"Unsynced resources: {first_n(unsynced)}"
        )
    return SYNCED_OK


def _fail(
    world: World,
    xr: Obj,
    error: str,
    events: Sequence[Event] = (),
    conditions: Sequence[Condition] = (),
) -> Report:
    """Report a compose failure: nothing is applied, unseen custom conditions go Unknown.

    `events` and `conditions` are what `Compose` returned with its error (only a
    fatal result returns any). As `Reconcile` does, the error is recorded first, as
    one Warning, with Synced=False; then `handleCommonCompositionResult` reports the
    result's events and sets its conditions; every custom condition they did not set
    goes Unknown (`conditionTypesSeen`).
    """
    message = f"{ERR_COMPOSE}: {error}"
    reported = [Event("Warning", REASON_COMPOSE, message), *events]
    seen = drop_reserved_conditions(conditions)
    _set(xr, [Condition("Synced", "False", "ReconcileError", message), *seen])
    seen_types = {c.type for c in seen}
    stale = [
        Condition(str(c.get("type")), "Unknown", REASON_FATAL_ERROR, _FATAL_UNKNOWN_MESSAGE)
        for c in (xr.get("status") or {}).get("conditions") or []
        if c.get("type") not in RESERVED_CONDITION_TYPES and c.get("type") not in seen_types
    ]
    _set(xr, stale)
    _store(world, xr)
    return Report(ObjectKey.of(xr), reported, message)


def _store(world: World, xr: Obj) -> None:
    """Write what a reconcile changes on its composite: status, and the metadata it sets.

    The rest is taken from the stored object, which another composite (the one
    that composed this) may have changed since this reconcile read it.
    """
    key = ObjectKey.of(xr)
    stored = world.get(key)
    if stored is None:
        return
    meta = dict(stored.get("metadata") or {})
    meta.setdefault("uid", fake_uid(key))
    meta["labels"] = {LABEL_COMPOSITE: key.name, **(meta.get("labels") or {})}
    world.put({**stored, "metadata": meta, "status": xr.get("status")})


def _ready(composite_ready: bool | None, unready: list[str]) -> Condition:
    # An explicit composite readiness from the pipeline supersedes the derived one.
    if composite_ready is True:
        return READY_OK
    if composite_ready is False:
        return Condition("Ready", "False", "Creating")
    if unready:
        return Condition("Ready", "False", "Creating", f"Unready resources: {first_n(unready)}")
    return READY_OK


def first_n(names: Iterable[str], n: int = _FIRST_N) -> str:
    """Crossplane's StableNAndSomeMore: sorted names, the first n, then how many more."""
    ordered = sorted(names)
    if len(ordered) > n:
        return f"{', '.join(ordered[:n])}, and {len(ordered) - n} more"
    if len(ordered) == n and n > 1:
        return f"{', '.join(ordered[: n - 1])}, and {ordered[n - 1]}"
    return ", ".join(ordered)


def _status_conditions(status: Mapping[str, Any] | None) -> list[Condition]:
    """Conditions a function wrote into the desired composite's status directly."""
    return [
        Condition(
            str(c["type"]), str(c["status"]), str(c.get("reason", "")), str(c.get("message", ""))
        )
        for c in (status or {}).get("conditions") or []
        if isinstance(c, Mapping) and c.get("type") and c.get("status")
    ]


def drop_reserved_conditions(*groups: Sequence[Condition]) -> list[Condition]:
    """Function conditions without the types Crossplane reserves for itself.

    Crossplane's composite reconciler skips every function condition whose type
    `IsSystemConditionType` (Ready, Synced, Healthy, UpToDate, and Responsive on
    composites: `internal/controller/apiextensions/composite/reconciler.go`,
    "Do not let users update system conditions"), so such a condition never reaches
    the composite's status, and nothing it says is seen by any reader.
    """
    return [c for group in groups for c in group if c.type not in RESERVED_CONDITION_TYPES]


def _set(xr: Obj, conditions: Iterable[Condition]) -> None:
    """Crossplane's SetConditions: replace a condition of the same type in place, else append."""
    status: Obj = xr.setdefault("status", {})
    current: list[Obj] = list(status.get("conditions") or [])
    for condition in conditions:
        new = condition.as_dict()
        for i, existing in enumerate(current):
            if existing.get("type") == condition.type:
                current[i] = new
                break
        else:
            current.append(new)
    status["conditions"] = current
