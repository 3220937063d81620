"""`-o diff`: what a render would change in the observed world.

The observed world is what the input gave as running (`--observed`, or files
that carry observed state); the rendered world is where reconciling the desired
sources over it converged. Listed, in (apiVersion, kind, namespace, name) order:
every object added, removed and changed (with a unified diff of its YAML), then
the replicas each ModelDeployment placed, moved (to another cluster or pool),
replaced where they ran (a rollout) and removed, then one summary line. Events
are a record of the render, not state, and are left out.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.core.vocabulary import MODEL_DEPLOYMENT
from modelplane_cli import yamlio
from modelplane_cli.render.result import RenderResult
from modelplane_cli.render.world import ObjectKey, View


@dataclass(frozen=True)
class Placement:
    replica: str
    cluster: str
    pools: str


def diff(result: RenderResult) -> str:
    before = _by_key(result.baseline)
    after = _by_key(result.objects)
    added = sorted(after.keys() - before.keys())
    removed = sorted(before.keys() - after.keys())
    changed = sorted(k for k in after.keys() & before.keys() if after[k] != before[k])
    sections: list[str] = []
    for key in sorted([*added, *removed, *changed]):
        if key in added:
            sections.append(f"added    {key}")
        elif key in removed:
            sections.append(f"removed  {key}")
        else:
            sections.append(f"changed  {key}\n{_unified(key, before[key], after[key])}")
    moves = replica_changes(before.values(), after.values())
    if moves:
        sections.append("REPLICAS\n" + "\n".join(moves.lines()))
    sections.append(
        f"{len(added)} added, {len(changed)} changed, {len(removed)} removed; "
        f"replicas: {len(moves.placed)} placed, {len(moves.moved)} moved, "
        f"{len(moves.replaced)} replaced, {len(moves.removed)} removed"
        if added or changed or removed or moves
        else "No changes."
    )
    return "\n\n".join(sections) + "\n"


@dataclass
class ReplicaChanges:
    """Per ModelDeployment, replicas that appear, move, are replaced where they ran, or go."""

    placed: list[tuple[ObjectKey, Placement]]
    moved: list[tuple[ObjectKey, Placement, Placement]]
    removed: list[tuple[ObjectKey, Placement]]
    replaced: list[tuple[ObjectKey, Placement, Placement]] = field(
        default_factory=list[tuple[ObjectKey, Placement, Placement]]
    )

    def __bool__(self) -> bool:
        return bool(self.placed or self.moved or self.removed or self.replaced)

    def lines(self) -> list[str]:
        out = [f"placed   {key}: {_where(p)}" for key, p in self.placed]
        out += [f"moved    {key}: {_where(old)} -> {_where(new)}" for key, old, new in self.moved]
        out += [
            f"replaced {key}: {_where(old)} -> {new.replica}" for key, old, new in self.replaced
        ]
        out += [f"removed  {key}: {_where(p)}" for key, p in self.removed]
        return out


def replica_changes(before: Iterable[View], after: Iterable[View]) -> ReplicaChanges:
    """Compare ModelDeployments' placements.

    A replica whose cluster or pools changed moved. A deployment that lost a
    replica and gained one replaced it: where (cluster and pools) they match, in
    place (a rollout's surge beside the replica it replaces); otherwise it moved
    it. What is left over was placed or removed.
    """
    old = _placements(before)
    new = _placements(after)
    changes = ReplicaChanges([], [], [])
    for key in sorted(old.keys() | new.keys()):
        was = old.get(key, {})
        now = new.get(key, {})
        for name in sorted(was.keys() & now.keys()):
            if (was[name].cluster, was[name].pools) != (now[name].cluster, now[name].pools):
                changes.moved.append((key, was[name], now[name]))
        gone = [was[name] for name in sorted(was.keys() - now.keys())]
        came = [now[name] for name in sorted(now.keys() - was.keys())]
        for p in list(gone):
            twin = next((c for c in came if (c.cluster, c.pools) == (p.cluster, p.pools)), None)
            if twin is not None:
                changes.replaced.append((key, p, twin))
                gone.remove(p)
                came.remove(twin)
        pairs = min(len(gone), len(came))
        changes.moved.extend((key, gone[i], came[i]) for i in range(pairs))
        changes.placed.extend((key, p) for p in came[pairs:])
        changes.removed.extend((key, p) for p in gone[pairs:])
    return changes


def _placements(objects: Iterable[View]) -> dict[ObjectKey, dict[str, Placement]]:
    found: dict[ObjectKey, dict[str, Placement]] = {}
    for obj in objects:
        if obj.get("kind") != MODEL_DEPLOYMENT:
            continue
        entries: list[Any] = (obj.get("status") or {}).get("placements") or []
        found[ObjectKey.of(obj)] = {
            str(p.get("replica")): Placement(
                str(p.get("replica")), str(p.get("cluster")), _pools(p.get("pools"))
            )
            for p in entries
            if isinstance(p, Mapping)
        }
    return found


def _pools(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))  # pyright: ignore[reportUnknownArgumentType]
    return str(value or "-")


def _where(p: Placement) -> str:
    return f"{p.replica} on {p.cluster} ({p.pools})"


def _by_key(objects: Iterable[View]) -> dict[ObjectKey, View]:
    return {
        ObjectKey.of(o): o
        for o in objects
        if not (o.get("apiVersion") == "v1" and o.get("kind") == "Event")
    }


def _unified(key: ObjectKey, before: View, after: View) -> str:
    lines = difflib.unified_diff(
        yamlio.dump(before).splitlines(),
        yamlio.dump(after).splitlines(),
        fromfile=f"observed/{key}",
        tofile=f"rendered/{key}",
        lineterm="",
    )
    return "\n".join(lines)
