"""Whether an object has the shape an API server would decode, in the parts the engine reads."""

from __future__ import annotations

from typing import Any, cast

from modelplane_cli.render.world import View


def shape_error(obj: View) -> str | None:
    """Why no API server would decode `obj`, in the parts the engine reads; None when it would.

    Checked wherever an object enters the world (input documents, composed
    resources), so the accessors in `world` can rely on metadata's maps and lists and
    on status conditions being objects.
    """
    meta = obj.get("metadata")
    if meta is not None:
        if not isinstance(meta, dict):
            return "metadata: must be an object"
        fields = cast(dict[str, Any], meta)
        for name in ("name", "namespace"):
            if fields.get(name) is not None and not isinstance(fields[name], str):
                return f"metadata.{name}: must be a string"
        for name in ("labels", "annotations"):
            values = fields.get(name)
            if values is not None and not _is_string_map(values):
                return f"metadata.{name}: must be a map of strings"
        if not _is_list_of_objects(fields.get("ownerReferences")):
            return "metadata.ownerReferences: must be a list of objects"
    status = obj.get("status")
    if status is not None:
        if not isinstance(status, dict):
            return "status: must be an object"
        if not _is_list_of_objects(cast(dict[str, Any], status).get("conditions")):
            return "status.conditions: must be a list of objects"
    return None


def _is_string_map(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(v, str) for v in cast(dict[str, Any], value).values()
    )


def _is_list_of_objects(value: object) -> bool:
    """True for None (absent) or a list of mappings."""
    return value is None or (
        isinstance(value, list) and all(isinstance(v, dict) for v in cast(list[Any], value))
    )


def without_unreadable_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """`meta` less the labels, annotations and ownerReferences Go's accessors cannot read.

    Crossplane renders a composed resource's metadata through apimachinery's
    `Unstructured` getters, which answer nil for a labels or annotations map that
    is not all strings and for ownerReferences that are not a list of objects;
    crossplane-runtime then sets only its own keys and reference. So a malformed
    one is replaced, not refused (`metadata.labels: {tier: 1}` becomes Crossplane's
    composite label alone), and the resource is applied.
    """
    kept = dict(meta)
    for name in ("labels", "annotations"):
        if name in kept and not _is_string_map(kept[name]):
            del kept[name]
    if not _is_list_of_objects(kept.get("ownerReferences")):
        del kept["ownerReferences"]
    return kept
