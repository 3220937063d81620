"""Pruning: the sources are the whole desired set, as a GitOps sync with pruning sees them.

Argo CD and Flux, pruning, delete what they applied before and the repository
no longer holds. Here, with a running world given, every composite of a kind the
sources hold that the running world has, no source names and nothing composed
(it has no controller) is deleted; what it composed goes with it, by the garbage
collector's cascade (`inputs`). `--no-prune` keeps them, as a sync without
pruning; `--allow-prune` deletes them without failing the render, for a pull
request meant to delete.

One a Usage protects is not deleted: Crossplane's `nousages` webhook refuses the
sync's DELETE (`protection`), so it stays with all it composed and the refusal
is reported. A Usage that would go with another composite this sync deletes
still refuses: it exists until that cascade ends, after the DELETE was answered
(a later sync may then succeed). One no Usage holds once the render is done (its
users stopped naming it in the same change) is a deletion that succeeds later
(`replayed`).

A composite of a kind the sources hold none of is left alone: the repository
does not manage that kind (the contract's rule). A sync that applied them prunes
them all the same, so `uncompared` names each such kind in a note.

Where the world's copies of the sources carry a sync tool's marks (`tracking`), the
kind rule gives way to what the sync does: the candidates are exactly the objects
the syncs that applied the sources marked, of any kind, and no source holds.
Otherwise, by kind, an object a tool marked as another sync's is left alone.

Other objects (PriorityClasses, kubeconfig Secrets) are not deleted from the
render's world, but the sync deletes them just the same: `left_behind` names
those of a kind the sources hold that only the running world has, so that a
reference to one (`references`) fails as it would once the sync has run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from modelplane_cli.render import references, tracking
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.inputs import normalize_scope
from modelplane_cli.render.loader import Document
from modelplane_cli.render.protection import refusal, usages_of
from modelplane_cli.render.world import Obj, ObjectKey, View, World, controller_reference


@dataclass(frozen=True)
class Pruned:
    """A composite the sources no longer hold, where it was read, and what it composed."""

    key: ObjectKey
    source: str
    composed: int
    # The API server's answer to the sync's DELETE when a Usage refuses it.
    refused: str | None = None
    # A refused deletion that succeeds later: after the render no Usage holds it, so
    # Crossplane replays the refused delete (`spec.replayDeletion`) or the next sync
    # retries it.
    later: bool = False
    # The sync that applied it, where the world records one (`tracking`).
    owner: tracking.Owner | None = None

    def message(self, *, accepted: bool = False) -> str:
        where = f"{self.source}: {self.key}"
        if self.owner is not None:
            where += f" (applied by {self.owner})"
        if self.refused is not None:
            return (
                f"{where}: no source holds it, but a sync with pruning "
                f"cannot delete it: {self.refused}"
            )
        what = "object" if self.composed == 1 else "objects"
        how = (
            "accepted: --allow-prune"
            if accepted
            else "--allow-prune accepts it, --no-prune keeps it"
        )
        when = (
            " once no Usage holds it (Crossplane replays the delete its webhook refused "
            "first, or the next sync retries it)"
            if self.later
            else ""
        )
        return (
            f"{where}: no source holds it: a sync with pruning deletes it"
            f"{when} and the {self.composed} {what} it composed ({how})"
        )


def replayed(pruned: Sequence[Pruned], world: Iterable[View]) -> list[Pruned]:
    """`pruned` after the render: a deletion a Usage refused is one that succeeds later
    when no Usage of the rendered `world` holds the object any more (its users stopped
    naming it in the same change)."""
    if all(p.refused is None for p in pruned):
        return list(pruned)
    after = World(world)
    return [
        replace(p, refused=None, later=True)
        if p.refused is not None and not usages_of(after, p.key)
        else p
        for p in pruned
    ]


@dataclass(frozen=True)
class _Read:
    """One input document with its object namespaced as the API server would."""

    doc: Document
    obj: Obj
    key: ObjectKey
    composite: bool


class Sync:
    """What a sync with pruning compares: the sources against the running world, each
    document read once for the four questions below."""

    def __init__(self, documents: Sequence[Document], apis: Apis) -> None:
        self._documents = list(documents)
        self._read: list[_Read] = []
        for doc in documents:
            obj = normalize_scope(doc.obj, apis)
            key = ObjectKey.of(obj)
            self._read.append(_Read(doc, obj, key, apis.is_composite(key.api_version, key.kind)))
        self._composite_kinds = {kind for _, kind in apis.types}
        # Where the world's copies of the sources record the sync that applied them, a
        # sync prunes only its own: what those syncs marked.
        sources = {read.key: read.obj for read in self._read if not read.doc.observed}
        owners: set[tracking.Owner] = set()
        for read in self._read:
            if read.doc.observed and read.key in sources and not controller_reference(read.obj):
                found = tracking.applied_by(read.obj, sources[read.key])
                owners.update([found] if found is not None else [])
        self._owners = frozenset(owners)

    def _prunes(self, read: _Read, *, held_kind: bool) -> bool:
        """Whether a sync with pruning deletes this uncontrolled world object that no
        source holds: its own, where the world records which sync applied the sources,
        else one of a kind the sources hold (`held_kind`) that no tool marked as another
        sync's; never one its tool must keep."""
        if tracking.prune_disabled(read.obj):
            return False
        if self._owners:
            return tracking.owner(read.obj) in self._owners
        return held_kind and tracking.owner(read.obj, instance_label=False) is None

    def uncompared(self) -> list[str]:
        """One note per composite kind the running world holds uncontrolled objects of
        and the sources hold none of: the render leaves them as they are, which is
        what a sync does only if it never applied them."""
        if self._owners:
            return []
        held: set[tuple[str, str]] = set()
        counts: dict[tuple[str, str], set[ObjectKey]] = {}
        for read in self._read:
            key = read.key
            if read.doc.deleted or not read.composite:
                continue
            if not read.doc.observed:
                held.add((key.group, key.kind))
            elif controller_reference(read.obj) is None:
                counts.setdefault((key.group, key.kind), set()).add(key)
        return [
            f"{_counted(len(keys), kind)} of the running world are not compared: the sources "
            "hold none of the kind; a sync with pruning that applied them deletes them"
            for (group, kind), keys in sorted(counts.items())
            if (group, kind) not in held
        ]

    def unheld_targets(self) -> list[str]:
        """One note per kind a source composite names objects of (`references.REFERENCES`)
        that only the running world holds, where the sources hold none of the kind in that
        namespace (the kind, when cluster-scoped): references to them resolve against the
        world, as a sync that never applied them leaves them; one that did deletes them.
        None where the world records which sync applied what: `left_behind` knows."""
        if self._owners:
            return []
        desired: list[View] = []
        held: set[tuple[str, str]] = set()
        # The world's uncontrolled objects by (kind, namespace, name): a reference names
        # no apiVersion.
        observed: dict[tuple[str, str, str], ObjectKey] = {}
        for read in self._read:
            key = read.key
            if read.doc.deleted:
                continue
            if read.doc.observed:
                if controller_reference(read.obj) is None:
                    observed.setdefault(key[1:], key)
            else:
                desired.append(read.obj)
                held.add((key.kind, key.namespace))
        named: dict[str, set[ObjectKey]] = {}
        for ref in references.REFERENCES:
            if ref.target in self._composite_kinds:
                continue  # `uncompared` and `prune` speak of composites
            for _, _, key in references.named(desired, ref):
                if (ref.target, key.namespace) not in held and key[1:] in observed:
                    named.setdefault(ref.target, set()).add(observed[key[1:]])
        return [
            f"{_counted(len(keys), kind)} the sources name "
            f"({', '.join(sorted(f'{k.namespace}/{k.name}'.lstrip('/') for k in keys))}) "
            f"{'is' if len(keys) == 1 else 'are'} in the running world only: a sync with pruning "
            f"that applied {'it deletes it' if len(keys) == 1 else 'them deletes them'}"
            for kind, keys in sorted(named.items())
            if keys
        ]

    def left_behind(self) -> frozenset[ObjectKey]:
        """Objects, not composites (`prune` decides those), only the running world holds,
        of a kind the sources hold in the same namespace (the kind, when cluster-scoped),
        that nothing composed: a sync with pruning deletes them, whatever their kind."""
        observed: dict[ObjectKey, _Read] = {}
        desired: set[ObjectKey] = set()
        for read in self._read:
            if read.doc.deleted or read.composite:
                continue
            if read.doc.observed:
                observed.setdefault(read.key, read)
            else:
                desired.add(read.key)
        # By namespace: a team's repository that holds a Secret of its own namespace does
        # not hold the platform's Secrets of another.
        held = {(key.group, key.kind, key.namespace) for key in desired}
        return frozenset(
            key
            for key, read in observed.items()
            if key not in desired
            and controller_reference(read.obj) is None
            and self._prunes(read, held_kind=(key.group, key.kind, key.namespace) in held)
        )

    def prune(self) -> tuple[list[Document], list[Pruned]]:
        """The documents with a deletion for each composite to prune, and those composites."""
        observed: dict[ObjectKey, _Read] = {}
        desired: set[ObjectKey] = set()
        kinds: set[tuple[str, str]] = set()
        for read in self._read:
            key = read.key
            if read.doc.observed:
                observed.setdefault(key, read)
                continue
            desired.add(key)
            if read.composite:
                kinds.add((key.group, key.kind))
        if not desired:
            return list(self._documents), []
        world = World(read.obj for read in observed.values())
        pruned: list[Pruned] = []
        for key, read in sorted(observed.items()):
            if key in desired or not read.composite or controller_reference(read.obj) is not None:
                continue
            if not self._prunes(read, held_kind=(key.group, key.kind) in kinds):
                continue
            composed = len(World(world.objects()).delete_cascade(key)) - 1
            usages = usages_of(world, key)
            refused = refusal(usages) if usages else None
            owner = tracking.owner(read.obj) if self._owners else None
            pruned.append(Pruned(key, read.doc.source, composed, refused, owner=owner))
        deletions = [
            Document(p.source, observed[p.key].obj, deleted=True)
            for p in pruned
            if p.refused is None
        ]
        return [*self._documents, *deletions], pruned


def _counted(count: int, kind: str) -> str:
    plural = kind if count == 1 else f"{kind}es" if kind.endswith("s") else f"{kind}s"
    return f"{count} {plural}"
