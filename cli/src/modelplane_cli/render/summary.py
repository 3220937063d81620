"""`-o summary`: the rendered world as a person reads it.

Composites with their Ready/Synced and own conditions; what did not come true and
why; any placements and match traces a composite reports in its status (printed
generically, whatever their shape); the workloads each composite puts on its
clusters through provider-kubernetes Objects, with the pods they run; each
ModelService's address and backends (`services`); why each replica is where it
is, each cluster's capacity and queues, and a Managed stack's Helm Releases
(`fleet_tables`); and the Warning events the last round still raised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane.core import kinds
from modelplane.core.vocabulary import RESERVED_CONDITION_TYPES
from modelplane_cli.render import fleet_tables
from modelplane_cli.render.result import RenderResult, identity
from modelplane_cli.render.services import services
from modelplane_cli.render.simulate import OBJECT_GROUPS
from modelplane_cli.render.timeline import listing, priced
from modelplane_cli.render.world import ObjectKey, View, World, group_of

_STATUS_TABLES = (("placements", "PLACEMENTS"), ("matchTrace", "MATCH TRACE"))
# Identity first, then a short reason word, so long free text (messages) ends the row.
_LEADING_COLUMNS = (
    "replica",
    "name",
    "index",
    "cluster",
    "clusterName",
    "pool",
    "pools",
    "role",
    "reason",
)


def summarize(
    result: RenderResult, composite_kinds: Sequence[str], *, with_timeline: bool = False
) -> str:
    """The summary of a render; `composite_kinds` are the kinds that have Compositions.

    Its first line says how long the render's rounds would take on a control
    plane (`timeline`); `with_timeline` adds when each composite reached each state.
    """
    world = World(result.objects)
    kinds = set(composite_kinds)
    composites = sorted(
        (obj for obj in world.objects() if obj.get("kind") in kinds),
        key=lambda o: (ObjectKey.of(o).kind, ObjectKey.of(o).namespace, ObjectKey.of(o).name),
    )
    state = "converged" if result.converged else "did NOT converge"
    time = priced(result.defaults, result.watched, watches=result.watches)
    sections = [
        f"Rendered {_count(len(result.objects), 'object')} in "
        f"{_count(result.rounds, 'round')} ({state}; {time}).",
        _composites(composites),
        _not_true(composites),
        *(
            _status_table(obj, field, title)
            for obj in composites
            for field, title in _STATUS_TABLES
        ),
        fleet_tables.why_here(composites, result.events, table),
        fleet_tables.capacity(composites, table),
        _workloads(world, composites),
        fleet_tables.releases(world, composites, table),
        services(composites, table),
        _warnings(result),
        _conflicts(result.conflicts),
        listing(result.timeline, table) if with_timeline else "",
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def _conflicts(conflicts: Sequence[str]) -> str:
    """Deletes a Usage refused: a control plane retries them without a trace."""
    if not conflicts:
        return ""
    return "REFUSED DELETES (retried silently on a control plane)\n" + "\n".join(conflicts)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns two spaces apart; the last column is not padded."""
    cells = [list(headers), *[[_one_line(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i < len(row) - 1 else cell for i, cell in enumerate(row))
        for row in cells
    ]
    return "\n".join(line.rstrip() for line in lines)


def _composites(composites: Sequence[View]) -> str:
    if not composites:
        return "No composites."
    rows = [
        [
            key.kind,
            key.namespace or "-",
            key.name,
            _condition(obj, "Ready").get("status", "-"),
            _condition(obj, "Synced").get("status", "-"),
            ", ".join(
                f"{c.get('type')}={c.get('status')}"
                + (f" ({c['reason']})" if c.get("reason") else "")
                for c in _conditions(obj)
                # Crossplane's own (Ready, Synced, Responsive) are not Modelplane's to explain.
                if c.get("type") not in RESERVED_CONDITION_TYPES
            ),
        ]
        for obj in composites
        for key in [ObjectKey.of(obj)]
    ]
    return "COMPOSITES\n" + table(
        ["KIND", "NAMESPACE", "NAME", "READY", "SYNCED", "CONDITIONS"], rows
    )


def _not_true(composites: Sequence[View]) -> str:
    rows = [
        [
            str(ObjectKey.of(obj)),
            str(c.get("type")),
            str(c.get("reason", "")),
            str(c.get("message", "")),
        ]
        for obj in composites
        for c in _conditions(obj)
        if c.get("status") != "True"
    ]
    if not rows:
        return ""
    return "NOT TRUE\n" + table(["COMPOSITE", "CONDITION", "REASON", "MESSAGE"], rows)


def _status_table(obj: View, field: str, title: str) -> str:
    value = (obj.get("status") or {}).get(field)
    if not value:
        return ""
    heading = f"{title}  {ObjectKey.of(obj)}"
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        records: list[Mapping[str, Any]] = list(value)
        columns = _columns(records)
        rows = [[_render(r.get(c)) for c in columns] for r in records]
        unnamed = _unnamed(obj) if field == "matchTrace" else ""
        return f"{heading}\n" + table([_header(c) for c in columns], rows) + unnamed
    if isinstance(value, Mapping):
        rows = [[str(k), _render(v)] for k, v in sorted(value.items())]
        return f"{heading}\n" + table(["KEY", "VALUE"], rows)
    return f"{heading}\n{_render(value)}"


def _unnamed(obj: View) -> str:
    """Status names the first clusters of a row and keeps the largest rows; say how
    to see the rest."""
    status = obj.get("status") or {}
    hidden = sum(
        int(e.get("clusters") or 1) - len(e.get("clusterNames") or [e.get("cluster")])
        for e in status.get("matchTrace") or []
        if isinstance(e, Mapping)
    )
    omitted = status.get("matchTraceOmitted")
    if isinstance(omitted, Mapping):
        hidden += int(omitted.get("rejections") or 0)
    if not hidden:
        return ""
    key = ObjectKey.of(obj)
    name = f"{key.namespace}/{key.name}" if key.namespace else key.name
    return f"\n({hidden} more rejections not listed: --trace {name} prints every cluster)"


def _workloads(world: World, composites: Sequence[View]) -> str:
    rows: list[list[str]] = []
    for xr in composites:
        kinds: dict[str, int] = {}
        targets: set[str] = set()
        pods = 0
        for key in world.controlled_by(xr):
            obj = world.get(key)
            if obj is None or key.kind != "Object" or key.group not in OBJECT_GROUPS:
                continue
            spec = obj.get("spec") or {}
            manifest = (spec.get("forProvider") or {}).get("manifest") or {}
            kind = str(manifest.get("kind", "?"))
            kinds[kind] = kinds.get(kind, 0) + 1
            pods += _pods(manifest)
            target = (spec.get("providerConfigRef") or {}).get("name")
            if target:
                targets.add(str(target))
        if kinds:
            rows.append(
                [
                    str(ObjectKey.of(xr)),
                    ", ".join(sorted(targets)) or "-",
                    ", ".join(f"{k}={n}" for k, n in sorted(kinds.items())),
                    str(pods),
                ]
            )
    if not rows:
        return ""
    return "WORKLOADS\n" + table(["COMPOSITE", "PROVIDERCONFIG", "OBJECTS", "PODS"], rows)


def _pods(manifest: Mapping[str, Any]) -> int:
    """Pods a workload runs when healthy; 0 for kinds that run none themselves."""
    if (group_of(str(manifest.get("apiVersion", ""))), manifest.get("kind")) == ("", "Pod"):
        return 1
    return kinds.pods(manifest)


def _warnings(result: RenderResult) -> str:
    """The Warnings the last reconcile of each composite raised, beside the state the
    render ends in; those only earlier rounds raised (a later one resolved them) are
    counted in one line, since read beside the final state they would say what is
    no longer true."""
    standing = result.standing()
    warnings = [e for e in result.events if e.get("type") == "Warning"]
    rows = [
        [_involved(e), str(e.get("reason", "")), str(e.get("message", ""))]
        for e in warnings
        if identity(e) in standing
    ]
    earlier = len(warnings) - len(rows)
    if not warnings:
        return ""
    lines = ["WARNINGS"]
    if rows:
        lines.append(table(["COMPOSITE", "REASON", "MESSAGE"], rows))
    else:
        lines.append("None in the last round.")
    if earlier:
        lines.append(
            f"({_count(earlier, 'earlier warning')}, no longer raised in the last round: "
            "-o yaml lists every Event)"
        )
    return "\n".join(lines)


def _involved(event: View) -> str:
    ref = event.get("involvedObject") or {}
    where = f"{ref['namespace']}/{ref.get('name')}" if ref.get("namespace") else ref.get("name")
    return f"{ref.get('kind')} {where}"


def _conditions(obj: View) -> list[Mapping[str, Any]]:
    return [c for c in (obj.get("status") or {}).get("conditions") or [] if isinstance(c, Mapping)]


def _condition(obj: View, kind: str) -> Mapping[str, Any]:
    return next((c for c in _conditions(obj) if c.get("type") == kind), {})


def _columns(records: Sequence[Mapping[str, Any]]) -> list[str]:
    present = {str(k) for r in records for k in r}
    leading = [c for c in _LEADING_COLUMNS if c in present]
    return leading + sorted(present - set(leading))


def _header(column: str) -> str:
    return "".join(f"_{c}" if c.isupper() else c for c in column).upper().lstrip("_")


def _render(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_render(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list):
        return "; ".join(_render(v) for v in value)
    return str(value)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _one_line(text: str) -> str:
    return " ".join(text.split())
