"""Rounds: reconcile every composite until the world stops changing.

A round is: providers report on the managed resources composed (or changed) in
the previous round (`providers`), then every composite that existed when the
round began is reconciled once, in (kind, namespace, name) order. The world has
converged when a whole round changes nothing.

By default each composite sees what the composites before it wrote that round,
as one reconciler working through a queue would. `concurrent` gives every
composite of a round the same snapshot of the world, as parallel reconcilers
would see it: writes still land, but nobody reads them until the next round.

Events are kept from every round (a replica placed in round two is reported even
though the last round changed nothing); whether a reconcile failed is read from
the last round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from modelplane.core import naming
from modelplane_cli.render import inputs
from modelplane_cli.render.admission import Admission
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.apiservers import WorkloadApiServers
from modelplane_cli.render.clock import render_clock
from modelplane_cli.render.faults import Faults
from modelplane_cli.render.invariants import Checker
from modelplane_cli.render.loader import RENDER_COMPONENT, Document
from modelplane_cli.render.pipeline import Event
from modelplane_cli.render.providers import Providers
from modelplane_cli.render.reads import Reads, RecordingWorld
from modelplane_cli.render.reconcile import Report, reconcile
from modelplane_cli.render.result import RenderResult
from modelplane_cli.render.runners import (
    FunctionClient,
    FunctionRegistry,
    GrpcFunctions,
    InProcessFunctions,
)
from modelplane_cli.render.simulate import is_managed
from modelplane_cli.render.timeline import Timeline, conditions_of, read_keys
from modelplane_cli.render.world import Obj, ObjectKey, World, fake_uid, metadata

DEFAULT_ROUNDS = 20
DEFAULT_NAMESPACE = inputs.DEFAULT_NAMESPACE
# An event's identity: type, reason and message.
EventKey = tuple[str, str, str]


class Engine:
    def __init__(
        self,
        apis: Apis,
        functions: FunctionClient,
        admission: Admission,
        max_rounds: int = DEFAULT_ROUNDS,
        *,
        servers: WorkloadApiServers | None = None,
        concurrent: bool = False,
        now: str | None = None,
        watches: bool = False,
        traced: Sequence[str] = (),
        faults: Faults | None = None,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self._apis = apis
        self._faults = faults
        # With faults, `max_rounds` is the fault-free tail that follows them.
        if faults is not None:
            functions = faults.functions(functions)
            max_rounds += faults.rounds
        self._functions = functions
        self._admission = admission
        self._max_rounds = max_rounds
        self._servers = servers or WorkloadApiServers(None)
        self._concurrent = concurrent
        self._now = now
        self._watches = watches
        # ModelDeployments ("namespace/name") whose match trace names every cluster.
        self._traced = tuple(traced)

    async def render(self, documents: Sequence[Document]) -> RenderResult:
        loaded = inputs.load(documents, self._apis, self._admission)
        world = loaded.world
        # One now for the whole render (`clock`), fixed before anything is composed.
        now = render_clock(world.objects(), self._now)
        faults = self._faults
        checker = Checker(world.objects(), now, faults) if faults is not None else None
        providers = Providers(self._servers, faults.apply if faults is not None else None)
        managed = [k for k in world.all_keys() if self._is_managed(k)]
        # Managed resources given without status have not been reconciled by a provider yet.
        pending = providers.observe_inputs(world, managed)
        reports: dict[ObjectKey, Report] = {}
        events: dict[ObjectKey, dict[EventKey, int]] = {}
        converged = False
        rounds = 0
        # Each composite's last run that wrote nothing, and what it read.
        last: dict[ObjectKey, tuple[Reads, Report]] = {}
        timelines = (Timeline(watches=False), Timeline(watches=True))
        conflicts: list[str] = []
        while rounds < self._max_rounds and not converged:
            rounds += 1
            round_start = world.revision
            if faults is not None:
                pending |= faults.start_round(rounds, world)
            for key in sorted(pending | providers.rolling | providers.unscheduled):
                start = world.revision
                observed = providers.reconcile(world, key)
                if world.revision != start:
                    for timeline in timelines:
                        timeline.provider_step(world, key, observed)
            if faults is not None:
                faults.observe(world, [k for k in world.all_keys() if self._is_managed(k)])
            composing_start = world.revision
            snapshot = World(world.objects()) if self._concurrent else None
            reports = {}
            for key in self._composites(world):
                before = conditions_of(world.get(key))
                start = world.revision
                report, reads = await self._reconcile(key, world, snapshot, last, now)
                if report is not None:
                    reports[key] = report
                    _record(events.setdefault(key, {}), report.events)
                    if report.conflict and f"{key}: {report.error}" not in conflicts:
                        conflicts.append(f"{key}: {report.error}")
                if world.revision != start:
                    changed = world.changed_since(start)
                    ttl = report.ttl if report is not None else None
                    read = read_keys(world, key, reads)
                    for timeline in timelines:
                        timeline.composite_step(world, key, changed, read, ttl, before)
            for timeline in timelines:
                timeline.end_round()
            pending = {k for k in world.changed_since(composing_start) if self._is_managed(k)}
            converged = world.revision == round_start and not providers.rolling
            if checker is not None:
                last_round = rounds == self._max_rounds
                converged = checker.end_round(rounds, world, converged, round_start, last_round)
        final = [reports[k] for k in sorted(reports) if k in world]
        return RenderResult(
            now=now,
            objects=[dict(obj) for obj in world.objects()],
            events=events_of(events, world),
            reports=final,
            converged=converged,
            rounds=rounds,
            input_errors=loaded.errors,
            input_notes=loaded.notes,
            baseline=loaded.baseline,
            rejected_manifests=[
                f"{key}: {message}"
                for key, message in sorted(providers.rejected.items())
                if key in world
            ],
            refused_pods=[
                f"{key}: {message}"
                for key, message in sorted(providers.refused_pods.items())
                if key in world
            ],
            unchecked_kinds=sorted(providers.unchecked),
            conflicts=conflicts,
            defaults=timelines[0],
            watched=timelines[1],
            watches=self._watches,
            faults=list(faults.injected) if faults is not None else [],
            violations=checker.violations if checker is not None else [],
        )

    async def _reconcile(
        self,
        key: ObjectKey,
        world: World,
        snapshot: World | None,
        last: dict[ObjectKey, tuple[Reads, Report]],
        now: str,
    ) -> tuple[Report | None, Reads | None]:
        """Reconcile one composite, or, in sequential rounds, reuse its last run's report
        when that run wrote nothing and nothing it read has changed since (`reads`):
        running it again would read, write and say the same. Returns what it read,
        None when it did not run."""
        if snapshot is not None:
            seen = RecordingWorld(snapshot)
            report = await reconcile(
                key,
                world,
                self._apis,
                self._functions,
                self._admission,
                snapshot=seen,
                now=now,
                traced=self._traced,
            )
            return report, seen.reads
        previous = last.get(key)
        if previous is not None and previous[0].unchanged(world):
            return previous[1], None
        recording = RecordingWorld(world)
        start = world.revision
        # `now` is fixed for the whole render, so a skipped run would have seen the same.
        report = await reconcile(
            key,
            recording,
            self._apis,
            self._functions,
            self._admission,
            now=now,
            traced=self._traced,
        )
        # A faulted round's answer is not a function of what it read: never reused.
        faulted = self._faults is not None and self._faults.active
        if report is not None and world.revision == start and not faulted:
            last[key] = (recording.reads, report)
        else:
            last.pop(key, None)
        return report, recording.reads

    def _is_managed(self, key: ObjectKey) -> bool:
        return not self._apis.is_composite(key.api_version, key.kind) and is_managed(
            key.api_version, key.kind
        )

    def _composites(self, world: World) -> list[ObjectKey]:
        keys = [k for k in world.all_keys() if self._apis.is_composite(k.api_version, k.kind)]
        return sorted(keys, key=lambda k: (k.kind, k.namespace, k.name, k.api_version))


def _record(seen: dict[EventKey, int], events: Sequence[Event]) -> None:
    """Fold one reconcile's events into what a composite recorded over all rounds.

    The count is how often one reconcile recorded the event, at most, so it does
    not grow with the number of rounds the simulation happened to take.
    """
    counts: dict[EventKey, int] = {}
    for event in events:
        ident = (event.type, event.reason, event.message)
        counts[ident] = counts.get(ident, 0) + 1
    for ident, count in counts.items():
        seen[ident] = max(seen.get(ident, 0), count)


def events_of(events: Mapping[ObjectKey, Mapping[EventKey, int]], world: World) -> list[Obj]:
    """Every composite's events, from every round, as v1 Events."""
    out: list[Obj] = []
    for key in sorted(events):
        counts = events[key]
        for (kind, reason, message), count in counts.items():
            involved: Obj = {"apiVersion": key.api_version, "kind": key.kind, "name": key.name}
            if key.namespace:
                involved["namespace"] = key.namespace
            involved["uid"] = metadata(world.get(key) or {}).get("uid") or fake_uid(key)
            digest = naming.digest(
                key.api_version, key.kind, key.namespace, key.name, kind, reason, message, length=16
            )
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {
                        "name": f"{key.name}.{digest}",
                        "namespace": key.namespace or DEFAULT_NAMESPACE,
                    },
                    "involvedObject": involved,
                    "type": kind,
                    "reason": reason,
                    "message": message,
                    "count": count,
                    "source": {"component": RENDER_COMPONENT},
                }
            )
    return out


async def render_async(
    documents: Sequence[Document],
    apis: Apis,
    functions: FunctionClient,
    admission: Admission,
    max_rounds: int = DEFAULT_ROUNDS,
    *,
    servers: WorkloadApiServers | None = None,
    concurrent: bool = False,
    now: str | None = None,
    watches: bool = False,
    traced: Sequence[str] = (),
    faults: Faults | None = None,
) -> RenderResult:
    """Render with `functions`, closing them afterwards."""
    engine = Engine(
        apis,
        functions,
        admission,
        max_rounds,
        servers=servers,
        concurrent=concurrent,
        now=now,
        watches=watches,
        traced=traced,
        faults=faults,
    )
    try:
        return await engine.render(documents)
    finally:
        await functions.close()


def render(
    documents: Sequence[Document],
    apis: Apis,
    registry: FunctionRegistry,
    admission: Admission,
    *,
    in_process: bool = False,
    max_rounds: int = DEFAULT_ROUNDS,
    servers: WorkloadApiServers | None = None,
    concurrent: bool = False,
    now: str | None = None,
    watches: bool = False,
    traced: Sequence[str] = (),
    faults: Faults | None = None,
) -> RenderResult:
    """Render on a fresh event loop; functions over loopback gRPC unless `in_process`."""

    # The result leaves the loop through this list, not as the main task's result:
    # when `asyncio.run` puts SIGINT's handler back, CPython's `signal` module looks
    # the old handler (a partial holding the task) up in its Handlers enum, and the
    # failed lookup's message is the handler's repr, the task's result included: two
    # reprs of the whole rendered world (0.15-0.2 s of CPU at 100 x 50, 4 MB each) for
    # a message no one reads.
    results: list[RenderResult] = []

    async def run() -> None:
        # gRPC's asyncio objects bind to the running loop, so they are made inside it.
        functions: FunctionClient = (
            InProcessFunctions(registry) if in_process else GrpcFunctions(registry)
        )
        result = await render_async(
            documents,
            apis,
            functions,
            admission,
            max_rounds,
            servers=servers,
            concurrent=concurrent,
            now=now,
            watches=watches,
            traced=traced,
            faults=faults,
        )
        results.append(result)

    asyncio.run(run())
    return results[0]
