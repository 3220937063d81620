"""What a composed resource's apply leaves of the object it lands on.

Crossplane applies a composed resource with server-side apply under the
composite's own field manager (`ComposedFieldOwnerName`), with ForceOwnership.
What other managers own stays: the status, the metadata the API server and
controllers write, a composed composite's own `resourceRefs`. Labels, annotations
and finalizers follow SSA's rule (`fieldowners`): one the desired object leaves
out is removed only when the composite's manager owns it and no other manager
does, so a key nobody owns stays, and one the composite took by force goes when
it stops desiring it. An object that records no managedFields (`kubectl get -o
yaml` leaves them out) cannot tell owners: it keeps crossplane-runtime's
annotations (every managed resource's `crossplane.io/external-name`,
`external-create-*`) and every finalizer, and drops the other labels and
annotations. Dropping the runtime's would make `-o diff` against a live export
report every managed resource as changed. Finalizers are a set: another
manager's stay in place, desired ones are added after them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, cast

from modelplane_cli.render import fieldowners
from modelplane_cli.render.fieldowners import FIELD_OWNER_COMPOSED_PREFIX, Owners, item_key
from modelplane_cli.render.objects import SERVER_METADATA, View, group_of
from modelplane_cli.render.world import Obj, ObjectKey, metadata

# crossplane-runtime's managed reconciler writes these on every managed resource
# (`NewNameAsExternalName`, the create bookkeeping); a composition rarely sets them.
# Kept when the object records no managedFields, where no other owner can be told.
RUNTIME_ANNOTATIONS = (
    "crossplane.io/external-name",
    "crossplane.io/external-create-pending",
    "crossplane.io/external-create-succeeded",
    "crossplane.io/external-create-failed",
)


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
    if existing is None:
        return merged
    if "status" in existing:
        merged["status"] = existing["status"]
    _keep_resource_refs(merged, existing)
    kept = metadata(existing)
    written = merged["metadata"]
    applied = {"metadata": dict(written)}
    for name in SERVER_METADATA:
        if kept.get(name) and name not in written:
            written[name] = kept[name]
    mine = composed_field_owner(xr)
    entries = fieldowners.entries_of(existing)
    owners = fieldowners.owners(entries, mine) if entries is not None else None
    for name in ("labels", "annotations"):
        have = kept.get(name)
        if not isinstance(have, Mapping):
            continue
        have = cast(Mapping[str, Any], have)
        ours: dict[str, Any] = dict(applied["metadata"].get(name) or {})
        extra = {k: have[k] for k in sorted(have) if k not in ours and _stays(owners, name, k)}
        if extra:
            written[name] = {**ours, **extra}
    _merge_finalizers(written, applied["metadata"], kept, owners)
    if entries is not None:
        record = fieldowners.record_apply(
            entries, mine, str(desired.get("apiVersion", "")), applied, existing
        )
        if record is not None:
            written["managedFields"] = record
    return merged


def _stays(owners: Owners | None, name: str, key: str) -> bool:
    """Whether an existing label or annotation the desired object leaves out stays."""
    if owners is None:
        return name == "annotations" and key in RUNTIME_ANNOTATIONS
    return not owners.removes(name, item_key(name, key))


def _merge_finalizers(written: Obj, applied: View, kept: View, owners: Owners | None) -> None:
    """Finalizers as a set: the existing ones that stay, in place, then the desired new ones.

    Without managedFields every existing one stays: they are controllers' (and
    the API server's) far more often than a composition's.
    """
    have = kept.get("finalizers")
    if not isinstance(have, list) or not have:
        return
    want = applied.get("finalizers")
    wanted = cast(list[Any], want) if isinstance(want, list) else []
    stays = [
        f
        for f in cast(list[Any], have)
        if f in wanted
        or owners is None
        or not owners.removes("finalizers", item_key("finalizers", f))
    ]
    merged = [*stays, *(f for f in wanted if f not in stays)]
    if merged:
        written["finalizers"] = merged
    else:
        written.pop("finalizers", None)


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
