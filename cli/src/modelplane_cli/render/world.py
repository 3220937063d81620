"""The simulated API server's object store: every object of the rendered world.

Objects are plain JSON-shaped dicts. The store owns its copies: `put` copies what
it is given, and readers get read-only views they must not mutate. A revision
counter moves only when an object really changes, which is how a round knows the
world reached its fixed point. Every object goes to functions as a protobuf
Struct, in requirements and observed state, many times a round; the store
serializes that Struct once per change of the object.
"""

from __future__ import annotations

import bisect
import uuid
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple

from modelplane.core.vocabulary import ANNOTATION_COMPOSITION_RESOURCE_NAME, LABEL_COMPOSITE
from modelplane.xfn.memo import Memos
from modelplane.xfn.structs import serialized
from modelplane_cli.render.objects import (
    View,
    annotations_of,
    clone,
    controller_reference,
    group_of,
    labels_of,
    matches_labels,
    metadata,
    owner_references,
)
from modelplane_cli.render.wire import resources

# The object helpers (`objects`) are re-exported: the engine reads them from here too.
__all__ = [
    "Obj",
    "ObjectKey",
    "Selection",
    "View",
    "World",
    "annotations_of",
    "clone",
    "controller_reference",
    "fake_uid",
    "group_of",
    "label_pairs",
    "labels_of",
    "matches_labels",
    "metadata",
    "owner_references",
    "reference_matches",
]

Obj = dict[str, Any]
# A select's arguments: apiVersion, kind, namespace (None for all), sorted labels (or None).
Selection = tuple[str, str, str | None, tuple[tuple[str, str], ...] | None]


def label_pairs(labels: Mapping[str, str] | None) -> tuple[tuple[str, str], ...] | None:
    """A select's labels as a key: sorted pairs, or None for no labels."""
    return tuple(sorted(labels.items())) if labels else None


# Fixed so that fake uids are the same on every machine and every run.
_UID_NAMESPACE = uuid.UUID("6f1c7a52-3b0e-4d8e-9a51-0c2b6de0a7f4")


class ObjectKey(NamedTuple):
    """An object's identity: apiVersion, kind, namespace ("" when cluster-scoped), name.

    A named tuple: the engine hashes, compares and sorts millions of keys a render,
    which a tuple does in C (a frozen dataclass's are Python), field by field.
    """

    api_version: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, obj: View) -> ObjectKey:
        metadata = obj.get("metadata") or {}
        fields = (
            str(obj.get("apiVersion", "")),
            str(obj.get("kind", "")),
            str(metadata.get("namespace") or ""),
            str(metadata.get("name") or ""),
        )
        # The tuple's own constructor: a named tuple's `__new__` is Python, 2x slower.
        return tuple.__new__(cls, fields)

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


def fake_uid(key: ObjectKey) -> str:
    """A stable stand-in for the uid the API server would assign."""
    return str(
        uuid.uuid5(_UID_NAMESPACE, f"{key.api_version}/{key.kind}/{key.namespace}/{key.name}")
    )


def reference_matches(ref: Mapping[str, Any], owner: View) -> bool:
    """Whether an owner reference names `owner`.

    Versions of one group are the same object to the API server, so only the
    group is compared. The uid is compared only when both sides carry one, so a
    hand-edited document without uids still finds its owner.
    """
    key = ObjectKey.of(owner)
    if ref.get("kind") != key.kind or ref.get("name") != key.name:
        return False
    if group_of(str(ref.get("apiVersion", ""))) != key.group:
        return False
    ref_uid = ref.get("uid")
    owner_uid = metadata(owner).get("uid")
    return not (ref_uid and owner_uid and ref_uid != owner_uid)


class World:
    """Objects by identity, with indexes for the questions the engine asks."""

    def __init__(self, objects: Iterable[View] = ()) -> None:
        self._objects: dict[ObjectKey, Obj] = {}
        # (apiVersion, kind) -> keys, so required-resource lists stay cheap.
        self._by_type: dict[tuple[str, str], set[ObjectKey]] = {}
        # The same keys in List order, sorted once for every select until the type
        # gains or loses an object (a change to an object keeps its place).
        self._listed: dict[tuple[str, str], list[ObjectKey]] = {}
        # (apiVersion, kind, label, value) -> keys: a labelled select visits only the
        # objects it can answer with (a cluster's replicas' Objects, not the fleet's).
        self._by_label: dict[tuple[str, str, str, str], set[ObjectKey]] = {}
        # The revision at which each type last gained, lost or changed an object: a
        # select's answer cannot change while its type's revision stands.
        self._type_changed_at: dict[tuple[str, str], int] = {}
        # Each object's Struct, serialized: made when first asked after a change.
        self._serialized: dict[ObjectKey, bytes] = {}
        # Each select's keys and serialized Resources answer, with the type's revision.
        self._selections: dict[Selection, tuple[int, list[ObjectKey], bytes]] = {}
        # (kind, name) of any owner -> dependents, for controller and cascade lookups.
        self._dependents: dict[tuple[str, str], set[ObjectKey]] = {}
        # Composite label -> objects that carry composed-resource metadata but no controller.
        self._uncontrolled: dict[str, set[ObjectKey]] = {}
        # The revision at which each object last changed, for "what changed this round".
        self._changed_at: dict[ObjectKey, int] = {}
        # Every put as (revision, key): a reconcile's writes without a walk of the world.
        self._puts: list[tuple[int, ObjectKey]] = []
        self.revision = 0
        # The engine's conversions of what functions answer (`pipeline`), kept by the
        # bytes converted and bounded, for as long as this world (one render) lives.
        self.memos = Memos()
        for obj in objects:
            self.put(obj)

    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, key: object) -> bool:
        return key in self._objects

    def all_keys(self) -> list[ObjectKey]:
        return sorted(self._objects)

    def get(self, key: ObjectKey) -> View | None:
        return self._objects.get(key)

    def serialized(self, key: ObjectKey) -> bytes:
        """The stored object's Struct, serialized deterministically."""
        found = self._serialized.get(key)
        if found is None:
            found = serialized(self._objects[key])
            self._serialized[key] = found
        return found

    def objects(self) -> Iterator[View]:
        for key in sorted(self._objects):
            yield self._objects[key]

    def put(self, obj: View) -> bool:
        """Store a copy of `obj`; return whether the world changed.

        A top-level value that *is* the stored object's own (a status write passes
        the stored spec along) is kept rather than copied again (`_stored_copy`).
        """
        key = ObjectKey.of(obj)
        old = self._objects.get(key)
        if old == obj:
            return False
        if old is None:
            self._listed.pop((key.api_version, key.kind), None)
        else:
            self._unindex(key, old)
            self._serialized.pop(key, None)
        stored = _stored_copy(obj, old)
        self._objects[key] = stored
        self._index(key, stored)
        self.revision += 1
        self._changed_at[key] = self.revision
        self._puts.append((self.revision, key))
        self._type_changed_at[(key.api_version, key.kind)] = self.revision
        return True

    def delete(self, key: ObjectKey) -> bool:
        old = self._objects.pop(key, None)
        if old is None:
            return False
        self._unindex(key, old)
        self._listed.pop((key.api_version, key.kind), None)
        self._serialized.pop(key, None)
        self._changed_at.pop(key, None)
        self.revision += 1
        self._type_changed_at[(key.api_version, key.kind)] = self.revision
        return True

    def changed_at(self, key: ObjectKey) -> int | None:
        """The revision at which the object last changed; None when it does not exist."""
        return self._changed_at.get(key)

    def type_changed_at(self, api_version: str, kind: str) -> int:
        """The revision at which an object of this type last changed; 0 when none ever did."""
        return self._type_changed_at.get((api_version, kind), 0)

    def changed_since(self, revision: int) -> list[ObjectKey]:
        """Objects written after `revision` that still exist: the log's tail."""
        start = bisect.bisect_right(self._puts, revision, key=lambda entry: entry[0])
        return sorted({k for _, k in self._puts[start:] if k in self._changed_at})

    def delete_cascade(self, key: ObjectKey) -> list[ObjectKey]:
        """Delete an object and, as the garbage collector would, everything it owns."""
        deleted: list[ObjectKey] = []
        pending = [key]
        while pending:
            current = pending.pop()
            obj = self._objects.get(current)
            if obj is None:
                continue
            pending.extend(self.dependents(obj))
            self.delete(current)
            deleted.append(current)
        return sorted(deleted)

    def select(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[ObjectKey]:
        """Keys of one type's objects, sorted by namespace then name, as a List returns them."""
        if labels:
            # The fewest candidates any one label admits, checked against the rest.
            candidates = min(
                (self._by_label.get((api_version, kind, k, v), set()) for k, v in labels.items()),
                key=len,
            )
            return sorted(
                (
                    key
                    for key in candidates
                    if (namespace is None or key.namespace == namespace)
                    and matches_labels(self._objects[key], labels)
                ),
                key=lambda k: (k.namespace, k.name),
            )
        listed = self._listed.get((api_version, kind))
        if listed is None:
            keys = self._by_type.get((api_version, kind), ())
            listed = sorted(keys, key=lambda k: (k.namespace, k.name))
            self._listed[(api_version, kind)] = listed
        if namespace is None:
            return list(listed)
        return [key for key in listed if key.namespace == namespace]

    def select_resources(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> tuple[list[ObjectKey], bytes]:
        """What `select` answers, and those objects as a serialized Resources message,
        joined once while no object of the type changes (the keys are shared: callers
        must not change them)."""
        selection: Selection = (api_version, kind, namespace, label_pairs(labels))
        revision = self.type_changed_at(api_version, kind)
        found = self._selections.get(selection)
        if found is None or found[0] != revision:
            keys = self.select(api_version, kind, namespace=namespace, labels=labels)
            found = (revision, keys, resources(self.serialized(key) for key in keys))
            self._selections[selection] = found
        return found[1], found[2]

    def named(self, kind: str, name: str, namespace: str = "") -> list[ObjectKey]:
        """Keys of every object of `kind` called `name` in `namespace`, whatever its apiVersion."""
        return sorted(
            candidate
            for (_, type_kind), keys in self._by_type.items()
            if type_kind == kind
            for candidate in keys
            if candidate.name == name and candidate.namespace == namespace
        )

    def dependents(self, owner: View) -> list[ObjectKey]:
        """Objects with any owner reference naming `owner`."""
        key = ObjectKey.of(owner)
        found: list[ObjectKey] = []
        for dep in sorted(self._dependents.get((key.kind, key.name), ())):
            obj = self._objects[dep]
            if key.namespace and dep.namespace != key.namespace:
                continue
            if any(reference_matches(ref, owner) for ref in owner_references(obj)):
                found.append(dep)
        return found

    def referencing(self, kind: str, name: str) -> AbstractSet[ObjectKey]:
        """Keys of the objects with an owner reference of this kind and name (of any
        group, uid or namespace): a superset of what `dependents` answers, from its index."""
        return self._dependents.get((kind, name), frozenset())

    def controlled_by(self, owner: View) -> list[ObjectKey]:
        """Objects whose controller reference names `owner`."""
        found: list[ObjectKey] = []
        for dep in self.dependents(owner):
            ref = controller_reference(self._objects[dep])
            if ref is not None and reference_matches(ref, owner):
                found.append(dep)
        return found

    def labelled_composed(self, root: str) -> list[ObjectKey]:
        """Objects with no controller that still carry composed-resource metadata for `root`.

        Hand-written documents may drop owner references but keep Crossplane's
        label and annotation; those are adopted by the composite they name.
        """
        return sorted(self._uncontrolled.get(root, ()))

    def find_owner(self, ref: Mapping[str, Any], dependent: ObjectKey) -> View | None:
        """The object an owner reference points at, in the dependent's namespace or cluster-wide."""
        kind = str(ref.get("kind", ""))
        name = str(ref.get("name", ""))
        group = group_of(str(ref.get("apiVersion", "")))
        for namespace in dict.fromkeys((dependent.namespace, "")):
            for (api_version, type_kind), keys in self._by_type.items():
                if type_kind != kind or group_of(api_version) != group:
                    continue
                candidate = ObjectKey(api_version, kind, namespace, name)
                if candidate in keys and reference_matches(ref, self._objects[candidate]):
                    return self._objects[candidate]
        return None

    def _index_entries(self, key: ObjectKey, obj: View) -> list[set[ObjectKey]]:
        """Every index set `key` belongs in, given `obj`; one list serves add and remove."""
        entries = [self._by_type.setdefault((key.api_version, key.kind), set())]
        for label, value in labels_of(obj).items():
            entries.append(
                self._by_label.setdefault((key.api_version, key.kind, label, value), set())
            )
        for ref in owner_references(obj):
            owner = (str(ref.get("kind", "")), str(ref.get("name", "")))
            entries.append(self._dependents.setdefault(owner, set()))
        root = _uncontrolled_root(obj)
        if root is not None:
            entries.append(self._uncontrolled.setdefault(root, set()))
        return entries

    def _index(self, key: ObjectKey, obj: View) -> None:
        for entry in self._index_entries(key, obj):
            entry.add(key)

    def _unindex(self, key: ObjectKey, obj: View) -> None:
        for entry in self._index_entries(key, obj):
            entry.discard(key)


def _stored_copy(obj: View, old: Obj | None) -> Obj:
    """A deep copy of `obj`, but for the top-level values that *are* (not equal) the
    replaced version's: stored objects never change in place, so those are shared
    with a version nothing stores any more. No two stored objects share anything."""
    if old is None:
        return {k: clone(v) for k, v in obj.items()}
    return {k: v if v is old.get(k) else clone(v) for k, v in obj.items()}


def _uncontrolled_root(obj: View) -> str | None:
    """The composite label of an object with composed-resource metadata but no controller."""
    if controller_reference(obj) is not None:
        return None
    if ANNOTATION_COMPOSITION_RESOURCE_NAME not in annotations_of(obj):
        return None
    return labels_of(obj).get(LABEL_COMPOSITE)
