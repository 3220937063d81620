"""What fails a render, by `--fail-on` level.

Always (whatever the level): an input the API server rejects, a reconcile that
fails (a fatal result, a function that cannot be called, a desired state that
cannot be applied), and a world that does not converge.

`error` (the default) adds what would break on a real control plane although the
world converged: a composed resource the control plane's API server refused (its
composite not Synced), a composed manifest a workload cluster's API server refuses
(and pods a workload's controller cannot create from a template), a pool whose
devices are overcommitted (`capacity`), and a composite ending with one of its
own conditions False for a reason that names a problem, not progress.
`warning` adds every Warning the last reconcile of a composite still raised (one a
later round resolved is not a failure).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from modelplane.core.vocabulary import PROGRESS_REASONS, RESERVED_CONDITION_TYPES
from modelplane_cli.render.capacity import overcommitted
from modelplane_cli.render.mistakes import Mistakes
from modelplane_cli.render.result import RenderResult, identity
from modelplane_cli.render.world import ObjectKey, View

NEVER: Final = "never"
ERROR: Final = "error"
WARNING: Final = "warning"
LEVELS: Final = (NEVER, ERROR, WARNING)

# Crossplane's own conditions: a failed reconcile is reported as such already.


def failures(
    result: RenderResult,
    level: str,
    composite_kinds: Iterable[str],
    mistakes: Mistakes | None = None,
) -> list[str]:
    """Every reason this render fails at `level`, one line each.

    `mistakes` are the refused manifests traced to where they were made
    (`mistakes.locate`); a condition only repeating one of them is left out.
    """
    if level not in LEVELS:
        raise ValueError(f"--fail-on must be one of {', '.join(LEVELS)}, not {level!r}")
    found = list(result.errors)
    if level == NEVER:
        return found
    # Composed resources the control plane refused (each on its composite), then
    # manifests the workload cluster refused, traced to where they were made.
    found.extend(result.unsynced)
    if mistakes is None:
        mistakes = Mistakes(
            [f"{m} (the API server would refuse it)" for m in result.rejected_manifests]
        )
    found.extend(mistakes.lines)
    found.extend(result.refused_pods)
    found.extend(overcommitted(result.objects))
    found.extend(
        line
        for line in condition_errors(result.objects, set(composite_kinds))
        if not mistakes.echoed(line)
    )
    if level == WARNING:
        found.extend(standing_warnings(result))
    return found


def standing_warnings(result: RenderResult) -> list[str]:
    """The Warnings the last reconcile of each composite still raised.

    Events are kept from every round, so the summary shows what happened on the
    way; a Warning a later round resolved (a cluster not connected yet in the
    first round of a concurrent render) is history, not a failure.
    """
    standing = result.standing()
    return [
        line
        for event, line in zip(result.events, warnings_per_event(result.events), strict=True)
        if line is not None and identity(event) in standing
    ]


def condition_errors(objects: Iterable[View], composite_kinds: set[str]) -> list[str]:
    """Composites' own conditions that are False for a reason naming a problem."""
    found: list[str] = []
    for obj in objects:
        if obj.get("kind") not in composite_kinds:
            continue
        for condition in _conditions(obj):
            kind = condition.get("type")
            reason = str(condition.get("reason", ""))
            if kind in RESERVED_CONDITION_TYPES or condition.get("status") != "False":
                continue
            if reason in PROGRESS_REASONS:
                continue
            message = condition.get("message")
            detail = f": {message}" if message else ""
            found.append(f"{ObjectKey.of(obj)}: {kind}=False ({reason}){detail}")
    return found


def warnings(events: Iterable[View]) -> list[str]:
    return [line for line in warnings_per_event(list(events)) if line is not None]


def warnings_per_event(events: Sequence[View]) -> list[str | None]:
    """Each event's failure line, None for an event that is not a Warning."""
    return [
        f"{_involved(e)}: Warning {e.get('reason')}: {e.get('message')}"
        if e.get("type") == "Warning"
        else None
        for e in events
    ]


def _involved(event: View) -> str:
    ref: Mapping[str, Any] = event.get("involvedObject") or {}
    name = ref.get("name")
    where = f"{ref['namespace']}/{name}" if ref.get("namespace") else name
    return f"{ref.get('kind')} {where}"


def _conditions(obj: View) -> list[Mapping[str, Any]]:
    return [c for c in (obj.get("status") or {}).get("conditions") or [] if isinstance(c, Mapping)]
