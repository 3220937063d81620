"""Rounds: reconcile every composite until the world stops changing.

A round is: providers report on the managed resources composed (or changed) in
the previous round, then every composite that existed when the round began is
reconciled once, in (kind, namespace, name) order. The world has converged when
a whole round changes nothing. The reports of that last round are the answer:
each composite's events, and whether its reconcile failed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from modelplane.core import naming
from modelplane_cli.render.admission import Admission
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.loader import RENDER_COMPONENT, Document
from modelplane_cli.render.reconcile import Report, reconcile
from modelplane_cli.render.runners import (
    FunctionClient,
    FunctionRegistry,
    GrpcFunctions,
    InProcessFunctions,
)
from modelplane_cli.render.simulate import (
    has_conditions,
    is_cluster_scoped,
    is_managed,
    provider_status,
)
from modelplane_cli.render.world import (
    Obj,
    ObjectKey,
    View,
    World,
    fake_uid,
    metadata,
    owner_references,
)

DEFAULT_ROUNDS = 20
DEFAULT_NAMESPACE = "default"


@dataclass
class RenderResult:
    """The final world, the last round's reports, and what went wrong."""

    objects: list[Obj]
    events: list[Obj]
    reports: list[Report]
    converged: bool
    rounds: int
    input_errors: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        found = list(self.input_errors)
        found.extend(f"{r.key}: {r.error}" for r in self.reports if r.error is not None)
        if not self.converged:
            rounds = "1 round" if self.rounds == 1 else f"{self.rounds} rounds"
            found.append(f"the world did not converge within {rounds}")
        return found

    @property
    def ok(self) -> bool:
        return not self.errors


class Engine:
    def __init__(
        self,
        apis: Apis,
        functions: FunctionClient,
        admission: Admission,
        max_rounds: int = DEFAULT_ROUNDS,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self._apis = apis
        self._functions = functions
        self._admission = admission
        self._max_rounds = max_rounds

    async def render(self, documents: Sequence[Document]) -> RenderResult:
        world, input_errors = self._load(documents)
        # Managed resources given without status have not been reconciled by a provider yet.
        pending = {
            k
            for k in world.all_keys()
            if self._is_managed(k) and not has_conditions(world.get(k) or {})
        }
        reports: dict[ObjectKey, Report] = {}
        converged = False
        rounds = 0
        while rounds < self._max_rounds and not converged:
            rounds += 1
            round_start = world.revision
            for key in sorted(pending):
                current = world.get(key)
                if current is not None:
                    world.put(provider_status(current))
            composing_start = world.revision
            reports = {}
            for key in self._composites(world):
                report = await reconcile(key, world, self._apis, self._functions, self._admission)
                if report is not None:
                    reports[key] = report
            pending = {k for k in world.changed_since(composing_start) if self._is_managed(k)}
            converged = world.revision == round_start
        final = [reports[k] for k in sorted(reports) if k in world]
        return RenderResult(
            objects=[dict(obj) for obj in world.objects()],
            events=events_of(final, world),
            reports=final,
            converged=converged,
            rounds=rounds,
            input_errors=input_errors,
        )

    def _is_managed(self, key: ObjectKey) -> bool:
        return not self._apis.is_composite(key.api_version, key.kind) and is_managed(
            key.api_version, key.kind
        )

    def _composites(self, world: World) -> list[ObjectKey]:
        keys = [k for k in world.all_keys() if self._apis.is_composite(k.api_version, k.kind)]
        return sorted(keys, key=lambda k: (k.kind, k.namespace, k.name, k.api_version))

    def _load(self, documents: Sequence[Document]) -> tuple[World, list[str]]:
        """Admit the input the way the API server would; return the world and its rejections."""
        world = World()
        errors: list[str] = []
        rejected: set[ObjectKey] = set()
        sources: dict[ObjectKey, str] = {}
        for doc in documents:
            obj = self._normalize_scope(doc.obj)
            key = ObjectKey.of(obj)
            if key in sources:
                errors.append(f"{doc.source}: {key} is also defined at {sources[key]}")
                continue
            sources[key] = doc.source
            if self._apis.is_composite(key.api_version, key.kind):
                obj, problems = self._admission.admit(obj)
                if problems:
                    errors.extend(
                        f'{doc.source}: {key.kind}.{key.group} "{key.name}" is invalid: {p}'
                        for p in problems
                    )
                    rejected.add(key)
                    continue
                obj.setdefault("metadata", {}).setdefault("uid", fake_uid(key))
            world.put(obj)
        _collect_orphans(world, rejected)
        return world, errors

    def _normalize_scope(self, obj: View) -> Obj:
        """Namespace the way kubectl and the API server would: default, or drop."""
        out: Obj = dict(obj)
        meta: Obj = dict(out.get("metadata") or {})
        out["metadata"] = meta
        api_version = str(out.get("apiVersion", ""))
        kind = str(out.get("kind", ""))
        namespaced = self._apis.is_namespaced_composite_kind(api_version, kind)
        if namespaced is False or (namespaced is None and is_cluster_scoped(api_version, kind)):
            meta.pop("namespace", None)
        elif namespaced and not meta.get("namespace"):
            meta["namespace"] = DEFAULT_NAMESPACE
        return out


def _collect_orphans(world: World, protected: set[ObjectKey]) -> None:
    """Delete, as Kubernetes' garbage collector would, objects whose every owner is gone.

    Owners the input tried to change but the API server refused still exist in
    the cluster, so their dependents stay.
    """
    for key in world.all_keys():
        obj = world.get(key)
        refs = owner_references(obj) if obj is not None else []
        if not refs:
            continue
        if any(world.find_owner(ref, key) is not None or _names(ref, protected) for ref in refs):
            continue
        world.delete_cascade(key)


def _names(ref: object, keys: set[ObjectKey]) -> bool:
    if not isinstance(ref, dict):
        return False
    return any(k.kind == ref.get("kind") and k.name == ref.get("name") for k in keys)


def events_of(reports: Sequence[Report], world: World) -> list[Obj]:
    """Each report's events as v1 Events, identical ones folded into one with a count."""
    out: list[Obj] = []
    for report in reports:
        counts: dict[tuple[str, str, str], int] = {}
        for event in report.events:
            ident = (event.type, event.reason, event.message)
            counts[ident] = counts.get(ident, 0) + 1
        key = report.key
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
) -> RenderResult:
    """Render with `functions`, closing them afterwards."""
    try:
        return await Engine(apis, functions, admission, max_rounds).render(documents)
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
) -> RenderResult:
    """Render on a fresh event loop; functions over loopback gRPC unless `in_process`."""

    async def run() -> RenderResult:
        # gRPC's asyncio objects bind to the running loop, so they are made inside it.
        functions: FunctionClient = (
            InProcessFunctions(registry) if in_process else GrpcFunctions(registry)
        )
        return await render_async(documents, apis, functions, admission, max_rounds)

    return asyncio.run(run())
