"""Who owns a composed object's labels, annotations and finalizers, by its managedFields.

Server-side apply removes a field the applier leaves out only when the applier
owned it and no other manager does; with force, a field whose value the applier
changes moves to the applier. Render needs both to keep what an apply keeps, round
after round, so it reads the owners from the stored `metadata.managedFields` and
writes the apply's changes of ownership back into them, for these three fields
only (the rest of the record is kept as it is).

Before it applies, Crossplane runs `ssa.PatchingManagedFieldsUpgrader`
(`internal/ssa/managed_fields.go`) on every observed composed resource: an object
no `apiextensions.crossplane.io/composed` manager has applied yet has its
managedFields cleared (every field unowned, so the apply removes none), and a
`before-first-apply` entry left from that is deleted once a composed manager
exists. Render reads the owners the same way. It leaves the record of a
not-yet-upgraded object unchanged, where Crossplane would rewrite it: within one
render a composition desires the same keys every round, so nothing it dropped
depends on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from modelplane_cli.render.objects import View
from modelplane_cli.render.world import Obj, metadata

# Crossplane's `FieldOwnerComposedPrefix`: the field manager of a composite's applies.
FIELD_OWNER_COMPOSED_PREFIX = "apiextensions.crossplane.io/composed"
# The manager the API server gives the fields of an object whose record was cleared.
BEFORE_FIRST_APPLY = "before-first-apply"
# The metadata fields whose ownership render follows, each keyed in fieldsV1 by `f:`
# (a map's key) or `v:` (a set's item, JSON-encoded).
FIELDS = ("labels", "annotations", "finalizers")


@dataclass
class Owners:
    """The keys of each field the composite's manager owns and the keys others own."""

    mine: dict[str, set[str]] = field(default_factory=lambda: {f: set[str]() for f in FIELDS})
    others: dict[str, set[str]] = field(default_factory=lambda: {f: set[str]() for f in FIELDS})

    def removes(self, name: str, key: str) -> bool:
        """Whether an apply that leaves `key` of field `name` out removes it."""
        return key in self.mine[name] and key not in self.others[name]


def entries_of(obj: View) -> list[Mapping[str, Any]] | None:
    """The object's managedFields entries; None when it records none (or not a list),
    as `kubectl get -o yaml` leaves them out."""
    entries = metadata(obj).get("managedFields")
    if not entries or not isinstance(entries, list):
        return None
    return [cast(Mapping[str, Any], e) for e in cast(list[Any], entries) if isinstance(e, Mapping)]


def upgraded(entries: list[Mapping[str, Any]]) -> bool:
    """Whether a composed manager has applied the object (the upgrader's first pass is done)."""
    return any(str(e.get("manager", "")).startswith(FIELD_OWNER_COMPOSED_PREFIX) for e in entries)


def owners(entries: list[Mapping[str, Any]], mine: str) -> Owners:
    """Who owns what, as the apply after the upgrader sees it."""
    found = Owners()
    if not upgraded(entries):
        return found  # the upgrader clears the record: every field is unowned
    for entry in entries:
        manager = entry.get("manager")
        if manager == BEFORE_FIRST_APPLY:
            continue  # the upgrader deletes it before the apply
        side = found.mine if manager == mine else found.others
        for name in FIELDS:
            side[name].update(_keys(entry, name))
    return found


def record_apply(
    entries: list[Mapping[str, Any]], mine: str, api_version: str, applied: View, live: View
) -> list[Obj] | None:
    """The managedFields after the composite's forced apply of `applied` over `live`;
    None when they do not change (or the object is not upgraded yet).

    The composite's manager comes to own exactly the keys it applied; a key whose
    value it changed is taken from every other manager (ForceOwnership); the
    `before-first-apply` entry goes.
    """
    if not upgraded(entries):
        return None
    applied_meta, live_meta = metadata(applied), metadata(live)
    desired = {name: _applied_keys(applied_meta.get(name), name) for name in FIELDS}
    taken = {name: _changed(applied_meta.get(name), live_meta.get(name)) for name in FIELDS}
    out: list[Obj] = []
    found_mine = False
    for entry in entries:
        manager = entry.get("manager")
        if manager == BEFORE_FIRST_APPLY:
            continue
        if manager == mine and not found_mine and _is_apply(entry):
            found_mine = True
            out.append(_with_keys(entry, desired))
            continue
        kept = _without_keys(entry, taken)
        if kept is not None:
            out.append(kept)
    if not found_mine and any(desired.values()):
        out.append(
            _with_keys(
                {
                    "manager": mine,
                    "operation": "Apply",
                    "apiVersion": api_version,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {},
                },
                desired,
            )
        )
    return None if out == [dict(e) for e in entries] else out


def item_key(name: str, item: object) -> str:
    """How fieldsV1 names a map key (`f:`) or a set item (`v:` and its JSON)."""
    if name == "finalizers":
        return "v:" + json.dumps(item, separators=(",", ":"))
    return f"f:{item}"


def _applied_keys(value: object, name: str) -> set[str]:
    if isinstance(value, Mapping):
        return {item_key(name, k) for k in cast(Mapping[str, Any], value)}
    if isinstance(value, list):
        return {item_key(name, v) for v in cast(list[Any], value)}
    return set()


def _changed(applied: object, live: object) -> set[str]:
    """The map keys whose applied value differs from the live one (a set has no values)."""
    if not isinstance(applied, Mapping) or not isinstance(live, Mapping):
        return set()
    applied_map, live_map = cast(Mapping[str, Any], applied), cast(Mapping[str, Any], live)
    return {f"f:{k}" for k, v in applied_map.items() if k in live_map and live_map[k] != v}


def _keys(entry: Mapping[str, Any], name: str) -> set[str]:
    owned = _meta_fields(entry).get(f"f:{name}")
    if not isinstance(owned, Mapping):
        return set()
    return set(cast(Mapping[str, Any], owned))


def _meta_fields(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    fields = entry.get("fieldsV1")
    meta = fields.get("f:metadata") if isinstance(fields, Mapping) else None
    return cast(Mapping[str, Any], meta) if isinstance(meta, Mapping) else {}


def _is_apply(entry: Mapping[str, Any]) -> bool:
    return entry.get("operation", "Apply") == "Apply" and not entry.get("subresource")


def _with_keys(entry: Mapping[str, Any], desired: dict[str, set[str]]) -> Obj:
    """`entry` owning exactly `desired` of each followed field, the rest as it was."""
    meta: Obj = dict(_meta_fields(entry))
    for name in FIELDS:
        owned = meta.get(f"f:{name}")
        if desired[name] and isinstance(owned, Mapping) and set(owned) == desired[name]:
            continue
        meta.pop(f"f:{name}", None)
        if desired[name]:
            meta[f"f:{name}"] = {k: {} for k in sorted(desired[name])}
    return _with_meta(entry, meta)


def _without_keys(entry: Mapping[str, Any], taken: dict[str, set[str]]) -> Obj | None:
    """`entry` less the keys taken from it; None when it then owns nothing."""
    meta: Obj = dict(_meta_fields(entry))
    if not any(taken[name] & _keys(entry, name) for name in FIELDS):
        return dict(entry)
    for name in FIELDS:
        owned = meta.get(f"f:{name}")
        if not isinstance(owned, Mapping) or not taken[name] & set(owned):
            continue
        left = {k: v for k, v in cast(Mapping[str, Any], owned).items() if k not in taken[name]}
        if left:
            meta[f"f:{name}"] = left
        else:
            del meta[f"f:{name}"]
    out = _with_meta(entry, meta)
    return out if out.get("fieldsV1") else None


def _with_meta(entry: Mapping[str, Any], meta: Obj) -> Obj:
    out: Obj = dict(entry)
    fields = entry.get("fieldsV1")
    rest: Obj = dict(cast(Mapping[str, Any], fields)) if isinstance(fields, Mapping) else {}
    if meta:
        rest["f:metadata"] = meta
    else:
        rest.pop("f:metadata", None)
    out["fieldsV1"] = rest
    return out
