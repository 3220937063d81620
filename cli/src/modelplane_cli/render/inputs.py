"""Turning input documents into the world a render starts from, as an API server would.

- **Scope**: namespaces are defaulted or dropped the way kubectl and the API server do.
- **Overlay**: the running world (`--observed`, or files that carry observed state)
  and the desired sources may name the same object. A source replaces the world's
  copy, keeping what only the server writes there (uid, resourceVersion,
  creationTimestamp, generation, and the status when the source has none), as
  `kubectl apply` would. Identical duplicates are one object; two different
  documents on the same side are an error naming both.
- **Known kinds**: a document in a group the APIs define (`modelplane.ai`) whose
  version or kind no XRD serves is an error naming it, never ignored.
- **Admission**: composites are defaulted and validated by their XRDs; a rejected
  one is left out and what it had composed stays, as the old object would.
- **Deletions**: a deleted document (`prune`: a composite the sources no longer
  hold) leaves the world; what it composed is then garbage.
- **Garbage**: objects whose every owner is gone are collected.

The observed documents, normalized, are the baseline `-o diff` compares against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from modelplane_cli.render import tracking
from modelplane_cli.render.admission import Admission
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.loader import Document
from modelplane_cli.render.objects import SERVER_METADATA
from modelplane_cli.render.simulate import is_cluster_scoped
from modelplane_cli.render.world import (
    Obj,
    ObjectKey,
    View,
    World,
    clone,
    fake_uid,
    owner_references,
)
from modelplane_cli.schema.errors import RULES_SKIPPED

DEFAULT_NAMESPACE = "default"
# The `spec.crossplane` fields Crossplane itself writes on a composite: what it
# composed, and the Composition and revision it selected (`SelectComposition`,
# `SelectCompositionRevision`; render writes only the first, see design/design.md).
_CROSSPLANE_WRITTEN = ("resourceRefs", "compositionRef", "compositionRevisionRef")


@dataclass
class Loaded:
    """The world to render, the observed baseline, and what the input got wrong."""

    world: World
    baseline: list[Obj] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # What the render assumed of the input and a reader should know (`_unsure_replicas`).
    notes: list[str] = field(default_factory=list)


def load(documents: Sequence[Document], apis: Apis, admission: Admission) -> Loaded:
    loaded = Loaded(World())
    observed: dict[ObjectKey, tuple[str, Obj]] = {}
    desired: dict[ObjectKey, tuple[str, Obj]] = {}
    deleted: set[ObjectKey] = set()
    for doc in documents:
        obj = normalize_scope(doc.obj, apis)
        key = ObjectKey.of(obj)
        if doc.deleted:
            deleted.add(key)
            continue
        problem = _unknown_kind(key, apis)
        if problem is not None:
            loaded.errors.append(f"{doc.source}: {problem}")
            continue
        side = observed if doc.observed else desired
        if key in side and side[key][1] != obj:
            loaded.errors.append(f"{doc.source}: {key} is also defined at {side[key][0]}")
            continue
        side.setdefault(key, (doc.source, obj))
    loaded.baseline = [clone(obj) for _, obj in sorted(observed.values(), key=_by_key)]
    merged: dict[ObjectKey, tuple[str, Obj]] = dict(observed)
    for key, (source, written) in desired.items():
        if key not in observed:
            merged[key] = (source, written)
            continue
        applied, unsure = _replace(observed[key][1], written, apis)
        merged[key] = (source, applied)
        if unsure is not None:
            loaded.notes.append(f"{source}: {key}: {unsure}")
    for key in deleted - desired.keys():
        merged.pop(key, None)
    rejected: set[ObjectKey] = set()
    for key in sorted(merged):
        source, obj = merged[key]
        if apis.is_composite(key.api_version, key.kind):
            # An input replacing an observed object is an update: its transition
            # rules (an immutable region, source or namespace) run, as the API server's do.
            if key in observed and key in desired:
                admitted, problems = admission.admit_update(obj, observed[key][1])
            else:
                admitted, problems = admission.admit(obj)
            if problems:
                # The API server's note that rules went unchecked is not a mistake.
                loaded.errors.extend(
                    f'{source}: {key.kind}.{key.group} "{key.name}" is invalid: {p}'
                    for p in problems
                    if not p.endswith(RULES_SKIPPED)
                )
                rejected.add(key)
                # The API server refuses the update and keeps the object it has.
                if key not in observed:
                    continue
                admitted, problems = admission.admit(observed[key][1])
                if problems:
                    continue
            obj = admitted
            obj.setdefault("metadata", {}).setdefault("uid", fake_uid(key))
        loaded.world.put(obj)
    _collect_orphans(loaded.world, rejected)
    return loaded


def normalize_scope(obj: View, apis: Apis) -> Obj:
    """Namespace the way kubectl and the API server would: default, or drop."""
    out: Obj = dict(obj)
    meta: Obj = dict(out.get("metadata") or {})
    out["metadata"] = meta
    api_version = str(out.get("apiVersion", ""))
    kind = str(out.get("kind", ""))
    namespaced = apis.is_namespaced_composite_kind(api_version, kind)
    if namespaced is False or (namespaced is None and is_cluster_scoped(api_version, kind)):
        meta.pop("namespace", None)
    elif namespaced and not meta.get("namespace"):
        meta["namespace"] = DEFAULT_NAMESPACE
    return out


def _by_key(entry: tuple[str, Obj]) -> ObjectKey:
    return ObjectKey.of(entry[1])


def _unknown_kind(key: ObjectKey, apis: Apis) -> str | None:
    """Why no API the XRDs define serves this document's apiVersion and kind, if so."""
    if key.group not in apis.groups or apis.is_composite(key.api_version, key.kind):
        return None
    _, _, version = key.api_version.rpartition("/")
    what = f'{key.api_version} {key.kind} "{key.name}"'
    served = apis.served_versions(key.group, key.kind)
    if version in served:
        return f"{what}: no Composition composes {key.kind}.{key.group} {version}"
    if served:
        return (
            f"{what}: {key.kind}.{key.group} is not served at version {version!r} "
            f"(served: {', '.join(served)})"
        )
    kinds = ", ".join(apis.kinds(key.group))
    return f"{what}: no kind {key.kind!r} in {key.group} (its kinds: {kinds})"


def _replace(observed: View, source: View, apis: Apis) -> tuple[Obj, str | None]:
    """`source` applied over the observed object: server-written fields stay. A
    composite's status is its status subresource's, which an apply of the main
    resource never writes (Crossplane writes it through `Status()`), and a field of
    its scale subresource that the source leaves out stays when an autoscaler set it
    (`_scaled`). With it, a note when that field was kept though nothing says who set
    it (`_unsure`)."""
    out = clone(dict(source))
    meta: Obj = out.setdefault("metadata", {})
    observed_meta = observed.get("metadata") or {}
    for name in SERVER_METADATA:
        if name in observed_meta and name not in meta:
            meta[name] = clone(observed_meta[name])
    api_version, kind = str(out.get("apiVersion", "")), str(out.get("kind", ""))
    composite = apis.is_composite(api_version, kind)
    if composite:
        out.pop("status", None)
    if "status" not in out and "status" in observed:
        out["status"] = clone(observed["status"])
    replicas = apis.replicas_path(api_version, kind) if composite else None
    note = None
    if replicas and _scaled(observed) and _at(out, replicas) is None:
        kept = _at(observed, replicas)
        if kept is not None and _put(out, replicas, clone(kept)):
            note = _unsure(observed, replicas, kept, apis.schema_for(api_version, kind))
    _keep_crossplane_fields(observed, out)
    tracking.keep_marks(observed, out)
    return out, note


def _scaled(observed: View) -> bool:
    """Whether another manager may own the object's replicas, so that an apply that
    leaves them out keeps them: its managedFields record a write through the scale
    subresource (an autoscaler, `kubectl scale`), or the world records no managedFields
    at all (`kubectl get -o yaml` leaves them out unless `--show-managed-fields`), when
    the render cannot tell and keeps what runs. Recorded managedFields with no such
    write say the sync's own apply owned them, and leaving them out resets them."""
    entries = _managers(observed)
    if entries is None:
        return True  # none recorded, or not a list admission will name: it cannot tell
    return any(isinstance(entry, dict) and entry.get("subresource") == "scale" for entry in entries)


def _managers(observed: View) -> list[Any] | None:
    """The object's managedFields entries; None when it records none (or not a list)."""
    fields = (observed.get("metadata") or {}).get("managedFields")
    if not fields or not isinstance(fields, list):
        return None
    return cast(list[Any], fields)


def _unsure(observed: View, path: tuple[str, ...], kept: object, schema: View | None) -> str | None:
    """Why replicas kept from the running world may not be what a sync leaves: the
    source leaves them out and the world records no managedFields, so the render
    cannot tell an autoscaler's value (which stays) from the sync's own earlier apply
    (which the sync resets to the default), and keeps it. None when it records them,
    or when the kept value is the default anyway."""
    if _managers(observed) is not None or kept == _schema_default(schema, path):
        return None
    return (
        f"the source leaves {'.'.join(path)} out and the running world records no "
        f"managedFields, so the render keeps the running {kept}; a sync resets it to its "
        "default unless an autoscaler or `kubectl scale` set it (export the world with "
        "--show-managed-fields for the preview to tell)"
    )


def _schema_default(schema: View | None, path: tuple[str, ...]) -> object:
    """The default the schema declares at `path`, or None."""
    node: object = schema
    for name in path:
        properties = node.get("properties") if isinstance(node, Mapping) else None
        node = properties.get(name) if isinstance(properties, Mapping) else None
    return node.get("default") if isinstance(node, Mapping) else None


def _at(obj: View, path: tuple[str, ...]) -> object:
    """The value at `path` in `obj`, or None."""
    have: object = obj
    for name in path:
        if not isinstance(have, dict) or name not in have:
            return None
        have = have[name]
    return have


def _put(out: Obj, path: tuple[str, ...], value: object) -> bool:
    """Set `value` at `path` in `out`, making the objects on the way; False when
    something on the way is not an object."""
    target: dict[str, Any] = out
    for name in path[:-1]:
        child = target.setdefault(name, {})
        if not isinstance(child, dict):
            return False
        target = cast(dict[str, Any], child)
    target[path[-1]] = value
    return True


def _keep_crossplane_fields(observed: View, out: Obj) -> None:
    """Keep the `spec.crossplane` fields Crossplane writes on a composite
    (`_CROSSPLANE_WRITTEN`) where the applied document leaves them out: an apply
    keeps fields another field manager set, so a composite applied again from a
    repository still lists what it composed."""
    observed_spec = observed.get("spec")
    spec = out.get("spec")
    if not isinstance(observed_spec, dict) or not isinstance(spec, dict):
        return
    written = cast(dict[str, Any], observed_spec).get("crossplane")
    if not isinstance(written, dict):
        return
    spec = cast(dict[str, Any], spec)
    crossplane = spec.get("crossplane") or {}
    if not isinstance(crossplane, dict):
        return
    crossplane = cast(dict[str, Any], crossplane)
    kept = {
        k: clone(written[k]) for k in _CROSSPLANE_WRITTEN if k in written and k not in crossplane
    }
    if kept:
        spec["crossplane"] = {**crossplane, **kept}


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
