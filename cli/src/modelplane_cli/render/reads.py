"""What one reconcile read from the world, so an unchanged composite need not run again.

Reconciling a composite is a pure function of what it reads (the composite, its
composed resources, what its functions require, credentials) and of the static
APIs. When its last run wrote nothing, and nothing it read has changed since, a
new run would read the same, write nothing again and say the same: the engine
reuses that run's report instead (`Engine`, sequential rounds only).

`RecordingWorld` stands in for the world during a reconcile and notes each object
read (with the revision it last changed at, or None when absent) and each query
with its answer. A select's objects are not noted one by one: the select keeps
its type's revision instead. `Reads.unchanged` checks them against the world now:
every object at the same revision, every query with the same answer, and every
select either on a type that has not moved or with the same answer, none of its
objects newer than the select. A read through anything that lists the whole
world (which a reconcile does not do) makes any later change count.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.xfn.memo import Memos
from modelplane_cli.render.world import Obj, ObjectKey, View, World, clone, label_pairs

# A query and its arguments, answered by a list of keys.
Query = tuple[Any, ...]


@dataclass
class Reads:
    objects: dict[ObjectKey, int | None] = field(default_factory=dict[ObjectKey, int | None])
    # Each query, the owner it asked about (as it was asked), and its answer.
    queries: list[tuple[Query, Obj | None, list[ObjectKey]]] = field(
        default_factory=list[tuple[Query, Obj | None, list[ObjectKey]]]
    )
    # Each select's type and the revision that type stood at when it was asked: while
    # no object of the type changes, the answer stands without being asked again.
    selected: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])
    whole_world_at: int | None = None

    def unchanged(self, world: World) -> bool:
        if self.whole_world_at is not None and world.revision != self.whole_world_at:
            return False
        if any(world.changed_at(key) != at for key, at in self.objects.items()):
            return False
        return all(self._stands(world, q, owner, keys) for q, owner, keys in self.queries)

    def _stands(self, world: World, query: Query, owner: Obj | None, keys: list[ObjectKey]) -> bool:
        if query[0] != "select":
            return _answer(world, query, owner) == keys
        # A select's objects are not noted one by one: while their type stands, so do
        # they, and once it moved, each must be older than the select.
        at = self.selected[(query[1], query[2])]
        if world.type_changed_at(query[1], query[2]) == at:
            return True
        return _answer(world, query, owner) == keys and all(
            (world.changed_at(key) or 0) <= at for key in keys
        )


def _answer(world: World, query: Query, owner: Obj | None) -> list[ObjectKey]:
    name, *args = query
    if name == "select":
        api_version, kind, namespace, labels = args
        return world.select(api_version, kind, namespace=namespace, labels=dict(labels or ()))
    if name == "named":
        return world.named(*args)
    if name == "labelled_composed":
        return world.labelled_composed(*args)
    assert owner is not None  # dependents and controlled_by always record their owner
    return world.dependents(owner) if name == "dependents" else world.controlled_by(owner)


class RecordingWorld(World):
    """The world, noting every read (see the module docstring); writes go straight through.

    It overrides every method of `World`, so nothing reads the world unseen.
    """

    def __init__(self, world: World) -> None:
        # No World state of its own: every method goes to the wrapped world.
        self._world = world
        self.reads = Reads()

    @property
    def revision(self) -> int:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self._world.revision

    @revision.setter
    def revision(self, value: int) -> None:
        self._world.revision = value

    @property
    def memos(self) -> Memos:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The wrapped world's memos: a conversion is no read of the world."""
        return self._world.memos

    def _note(self, key: ObjectKey) -> None:
        self.reads.objects.setdefault(key, self._world.changed_at(key))

    def _query(
        self, query: Query, keys: list[ObjectKey], owner: View | None = None
    ) -> list[ObjectKey]:
        self.reads.queries.append(
            (query, None if owner is None else clone(dict(owner)), list(keys))
        )
        if query[0] != "select":  # a select's objects stand with their type (`Reads`)
            for key in keys:
                self._note(key)
        return keys

    def _everything(self) -> None:
        if self.reads.whole_world_at is None:
            self.reads.whole_world_at = self._world.revision

    def __len__(self) -> int:
        self._everything()
        return len(self._world)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, ObjectKey):
            self._note(key)
        return key in self._world

    def all_keys(self) -> list[ObjectKey]:
        self._everything()
        return self._world.all_keys()

    def get(self, key: ObjectKey) -> View | None:
        self._note(key)
        return self._world.get(key)

    def serialized(self, key: ObjectKey) -> bytes:
        self._note(key)
        return self._world.serialized(key)

    def objects(self) -> Iterator[View]:
        self._everything()
        return self._world.objects()

    def changed_at(self, key: ObjectKey) -> int | None:
        self._note(key)
        return self._world.changed_at(key)

    def changed_since(self, revision: int) -> list[ObjectKey]:
        self._everything()
        return self._world.changed_since(revision)

    def put(self, obj: View) -> bool:
        return self._world.put(obj)

    def delete(self, key: ObjectKey) -> bool:
        return self._world.delete(key)

    def delete_cascade(self, key: ObjectKey) -> list[ObjectKey]:
        return self._world.delete_cascade(key)

    def select(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[ObjectKey]:
        keys = self._world.select(api_version, kind, namespace=namespace, labels=labels)
        self._selected(api_version, kind, namespace, labels, keys)
        return keys

    def select_resources(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> tuple[list[ObjectKey], bytes]:
        keys, answer = self._world.select_resources(
            api_version, kind, namespace=namespace, labels=labels
        )
        self._selected(api_version, kind, namespace, labels, keys)
        return keys, answer

    def _selected(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        keys: list[ObjectKey],
    ) -> None:
        self.reads.selected.setdefault(
            (api_version, kind), self._world.type_changed_at(api_version, kind)
        )
        self._query(("select", api_version, kind, namespace, label_pairs(labels)), keys)

    def type_changed_at(self, api_version: str, kind: str) -> int:
        self._everything()  # it moves with any object of the type
        return self._world.type_changed_at(api_version, kind)

    def named(self, kind: str, name: str, namespace: str = "") -> list[ObjectKey]:
        return self._query(
            ("named", kind, name, namespace), self._world.named(kind, name, namespace)
        )

    def dependents(self, owner: View) -> list[ObjectKey]:
        key = ObjectKey.of(owner)
        self._note(key)
        return self._query(("dependents",), self._world.dependents(owner), owner)

    def controlled_by(self, owner: View) -> list[ObjectKey]:
        key = ObjectKey.of(owner)
        self._note(key)
        return self._query(("controlled_by",), self._world.controlled_by(owner), owner)

    def labelled_composed(self, root: str) -> list[ObjectKey]:
        return self._query(("labelled_composed", root), self._world.labelled_composed(root))

    def find_owner(self, ref: Mapping[str, Any], dependent: ObjectKey) -> View | None:
        self._everything()
        return self._world.find_owner(ref, dependent)
