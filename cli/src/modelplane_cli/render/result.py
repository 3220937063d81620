"""What a render leaves: the final world, its events, the last round's reports, and
every reason it fails (`errors`) or only warns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane_cli.render.faults import Injected
from modelplane_cli.render.invariants import Violation
from modelplane_cli.render.reconcile import Report, first_n
from modelplane_cli.render.timeline import Timeline
from modelplane_cli.render.world import Obj, ObjectKey, View


@dataclass
class RenderResult:
    """The final world, its events, the last round's reports, and what went wrong."""

    objects: list[Obj]
    events: list[Obj]
    reports: list[Report]
    converged: bool
    rounds: int
    # The render clock every function saw (`clock`).
    now: str = ""
    input_errors: list[str] = field(default_factory=list)
    # What the render assumed of the input that a reader should know (`inputs.Loaded`).
    input_notes: list[str] = field(default_factory=list)
    # The observed world the input described, normalized: what `-o diff` compares with.
    baseline: list[Obj] = field(default_factory=list)
    # Composed manifests a workload cluster's API server refused, as "Object: message".
    rejected_manifests: list[str] = field(default_factory=list)
    # Composed workloads whose controller could not create pods, as "Object: message".
    refused_pods: list[str] = field(default_factory=list)
    # Kinds of composed manifests that could not be validated (no CRDs given).
    unchecked_kinds: list[str] = field(default_factory=list)
    # Every refused delete of the render, from any round, as "Composite: error":
    # on a control plane they leave no event and no condition behind.
    conflicts: list[str] = field(default_factory=list)
    # `--faults`: what was injected, and every invariant a round broke (`invariants`).
    faults: list[Injected] = field(default_factory=list[Injected])
    violations: list[Violation] = field(default_factory=list[Violation])
    # The render priced in wall-clock time (`timeline`): with default intervals,
    # and with provider-kubernetes watches on; `watches` says which one leads.
    defaults: Timeline = field(default_factory=lambda: Timeline(watches=False))
    watched: Timeline = field(default_factory=lambda: Timeline(watches=True))
    watches: bool = False

    @property
    def timeline(self) -> Timeline:
        """The timeline `--watches` chose."""
        return self.watched if self.watches else self.defaults

    @property
    def errors(self) -> list[str]:
        """What always fails a render: rejected input, failed reconciles, no convergence."""
        found = list(self.input_errors)
        found.extend(f"{r.key}: {r.error}" for r in self.reports if r.error is not None)
        found.extend(str(v) for v in self.violations)
        if not self.converged:
            rounds = "1 round" if self.rounds == 1 else f"{self.rounds} rounds"
            found.append(f"the world did not converge within {rounds}")
        return found

    @property
    def unsynced(self) -> list[str]:
        """Composites whose last reconcile had composed resources the API server refused."""
        return [
            f"{r.key}: Synced=False: Unsynced resources: {first_n(r.unsynced)}"
            for r in self.reports
            if r.unsynced
        ]

    @property
    def ok(self) -> bool:
        return not self.errors

    def standing(self) -> frozenset[EventIdentity]:
        """Every event the last reconcile of each composite raised (`identity`).

        `events` are kept from every round, so a Warning a later round resolved (an
        external endpoint pending its BackendTLSPolicy until the policy is observed)
        is among them; it is history, not the state the render ends in.
        """
        return frozenset(
            (str(report.key), event.type, event.reason, event.message)
            for report in self.reports
            for event in report.events
        )


# An event's composite (`Kind namespace/name`), type, reason and message.
EventIdentity = tuple[str, str, str, str]


def identity(event: View) -> EventIdentity:
    """What `RenderResult.standing` knows an event of `RenderResult.events` by."""
    ref: Mapping[str, Any] = event.get("involvedObject") or {}
    key = ObjectKey("", str(ref.get("kind")), str(ref.get("namespace") or ""), str(ref.get("name")))
    return (str(key), str(event.get("type")), str(event.get("reason")), str(event.get("message")))
