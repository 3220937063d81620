"""What a composed resource's apply leaves of the object it lands on.

Crossplane applies a composed resource with server-side apply under the
composite's own field manager (`ComposedFieldOwnerName`), so what other managers
own stays: the status, the metadata the API server and controllers write, a
composed composite's own `resourceRefs`, and the labels and annotations another
manager set, crossplane-runtime's above all (every managed resource's
`crossplane.io/external-name`, `external-create-*`). Dropping those would make
`-o diff` against a live export report every managed resource as changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, cast

from modelplane_cli.render.objects import SERVER_METADATA, View, group_of
from modelplane_cli.render.world import Obj, ObjectKey, metadata

# crossplane-runtime's managed reconciler writes these on every managed resource
# (`NewNameAsExternalName`, the create bookkeeping); a composition rarely sets them.
# They are kept even when the object records no managedFields (`kubectl get -o yaml`
# leaves them out), where no other owner can be told.
RUNTIME_ANNOTATIONS = (
    "crossplane.io/external-name",
    "crossplane.io/external-create-pending",
    "crossplane.io/external-create-succeeded",
    "crossplane.io/external-create-failed",
)
# Crossplane's `FieldOwnerComposedPrefix`: the field manager of a composite's applies.
FIELD_OWNER_COMPOSED_PREFIX = "apiextensions.crossplane.io/composed"


def composed_field_owner(xr: ObjectKey) -> str:
    """Crossplane's `ComposedFieldOwnerName`: the composite's name and group-kind, hashed."""
    group = group_of(xr.api_version)
    group_kind = f"{xr.kind}.{group}" if group else xr.kind
    digest = hashlib.sha256((xr.name + group_kind).encode()).hexdigest()
    return f"{FIELD_OWNER_COMPOSED_PREFIX}/{digest}"


def resource_refs(xr: View) -> list[Mapping[str, Any]] | None:
    """The composite's `spec.crossplane.resourceRefs`; None when it has never had any."""
    crossplane = (xr.get("spec") or {}).get("crossplane")
    refs = crossplane.get("resourceRefs") if isinstance(crossplane, Mapping) else None
    if not isinstance(refs, list):
        return None
    return [ref for ref in refs if isinstance(ref, Mapping)]  # pyright: ignore[reportUnknownVariableType]


def merge(xr: ObjectKey, desired: Obj, existing: View | None) -> Obj:
    """Server-side apply of the composite's intent: its fields win, status is kept.

    The kept status is shared with the stored object until `World.put` copies it.
    """
    merged = desired
    if existing is not None:
        if "status" in existing:
            merged["status"] = existing["status"]
        _keep_resource_refs(merged, existing)
        kept = metadata(existing)
        written = merged["metadata"]
        for name in SERVER_METADATA:
            if kept.get(name) and name not in written:
                written[name] = kept[name]
        for field, keys in _others_keys(xr, existing).items():
            have = kept.get(field)
            if not isinstance(have, Mapping):
                continue
            have = cast(Mapping[str, Any], have)
            mine: dict[str, Any] = dict(written.get(field) or {})
            extra = {k: have[k] for k in sorted(keys) if k in have and k not in mine}
            if extra:
                written[field] = {**mine, **extra}
    return merged


def _keep_resource_refs(merged: Obj, existing: View) -> None:
    """A composed composite keeps the references its own reconciler wrote.

    They are another field manager's under server-side apply, so the parent's
    apply, which does not set them, leaves them as they are.
    """
    refs = resource_refs(existing)
    if refs is None or resource_refs(merged) is not None:
        return
    spec: Obj = dict(merged.get("spec") or {})
    spec["crossplane"] = {**(spec.get("crossplane") or {}), "resourceRefs": refs}
    merged["spec"] = spec


def _others_keys(xr: ObjectKey, existing: View) -> dict[str, set[str]]:
    """The label and annotation keys of `existing` some other field manager owns.

    Read from its managedFields (`f:metadata` of every entry not the composite's
    own), plus crossplane-runtime's annotations, whose writer is known without them.
    """
    keys: dict[str, set[str]] = {"labels": set(), "annotations": set(RUNTIME_ANNOTATIONS)}
    mine = composed_field_owner(xr)
    entries = metadata(existing).get("managedFields")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping):
            continue
        entry = cast(Mapping[str, Any], entry)
        if entry.get("manager") == mine:
            continue
        fields = entry.get("fieldsV1")
        meta = fields.get("f:metadata") if isinstance(fields, Mapping) else None
        if not isinstance(meta, Mapping):
            continue
        for field, found in keys.items():
            owned = cast(Mapping[str, Any], meta).get(f"f:{field}")
            if isinstance(owned, Mapping):
                found.update(k[2:] for k in owned if isinstance(k, str) and k.startswith("f:"))
    return keys
