"""Composed resources: observing them, rendering their metadata, applying and collecting them.

Mirrors Crossplane's `RenderComposedResourceMetadata` and the apply/GC half of
`Compose`, with two deliberate simplifications: a name Crossplane would allocate
from `generateName` is a stable hash instead (so output is deterministic), and
every desired resource is checked before anything is applied, so a composite
whose desired state the API server would reject changes nothing that round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from modelplane.core import naming
from modelplane.core.vocabulary import ANNOTATION_COMPOSITION_RESOURCE_NAME, LABEL_COMPOSITE
from modelplane_cli.render.admission import Admission, metadata_errors
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.pipeline import REASON_COMPOSE, DesiredResource, Event, quote
from modelplane_cli.render.shapes import shape_error
from modelplane_cli.render.simulate import is_cluster_scoped
from modelplane_cli.render.world import (
    Obj,
    ObjectKey,
    View,
    World,
    annotations_of,
    controller_reference,
    fake_uid,
    labels_of,
    metadata,
    reference_matches,
)

# Kubernetes keeps 5 characters of a generated name for its random suffix.
_GENERATED_SUFFIX = 5
_GENERATED_PREFIX_MAX = naming.DNS_LABEL_MAX - _GENERATED_SUFFIX


@dataclass
class Plan:
    """What applying one composite's desired state would write, or why it cannot."""

    objects: dict[str, Obj] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def root_name(xr: View) -> str:
    """The root composite's name, which Crossplane carries down in the composite label."""
    return labels_of(xr).get(LABEL_COMPOSITE) or str(metadata(xr).get("name", ""))


def observe(world: World, xr: View) -> tuple[dict[str, View], list[str]]:
    """The composite's composed resources keyed by composition-resource-name, and errors.

    A composed resource is one whose controller reference names the composite.
    Documents written without owner references but with Crossplane's label and
    annotation are adopted by the root composite the label names, unless one it
    controls already has that composition-resource-name.
    """
    xr_key = ObjectKey.of(xr)
    observed: dict[str, View] = {}
    errors: list[str] = []
    for key in world.controlled_by(xr):
        _observe_one(world, key, observed, errors)
    if root_name(xr) == xr_key.name:
        controlled = set(observed)
        for key in world.labelled_composed(xr_key.name):
            obj = world.get(key)
            name = annotations_of(obj).get(ANNOTATION_COMPOSITION_RESOURCE_NAME) if obj else None
            same_scope = not xr_key.namespace or key.namespace == xr_key.namespace
            if key != xr_key and same_scope and name not in controlled:
                _observe_one(world, key, observed, errors)
    return observed, errors


def _observe_one(
    world: World, key: ObjectKey, observed: dict[str, View], errors: list[str]
) -> None:
    obj = world.get(key)
    if obj is None:
        return
    name = annotations_of(obj).get(ANNOTATION_COMPOSITION_RESOURCE_NAME)
    if not name:
        errors.append(
            f"composed resource {key} has no {ANNOTATION_COMPOSITION_RESOURCE_NAME} annotation"
        )
    elif name in observed:
        errors.append(
            f"composed resources {ObjectKey.of(observed[name])} and {key} are both named "
            f"{quote(name)}"
        )
    else:
        observed[name] = obj


def plan(
    xr: View,
    desired: Mapping[str, DesiredResource],
    observed: Mapping[str, View],
    world: World,
    apis: Apis,
    admission: Admission,
) -> Plan:
    """Render, merge and admit every desired resource, without writing anything."""
    result = Plan()
    targets: dict[ObjectKey, str] = {}
    for name in sorted(desired):
        obj, errors = _render(xr, name, desired[name].obj, observed.get(name), apis, result)
        if not errors:
            key = ObjectKey.of(obj)
            existing = world.get(key)
            errors = _conflicts(xr, key, existing, targets.get(key))
            targets[key] = name
            if not errors:
                obj = _merge(obj, existing)
                if apis.is_composite(key.api_version, key.kind):
                    # The API server gives every new object a uid; owner references need it.
                    obj["metadata"].setdefault("uid", fake_uid(key))
                    obj, errors = admission.admit(obj)
                    errors = [
                        f'{key.kind}.{key.group} "{key.name}" is invalid: {e}' for e in errors
                    ]
        if errors:
            result.errors.extend(
                f"cannot apply composed resource {quote(name)}: {e}" for e in errors
            )
        else:
            result.objects[name] = obj
    return result


def apply(world: World, observed: Mapping[str, View], planned: Plan) -> None:
    """Delete what is no longer desired, then write every planned object."""
    keep = {ObjectKey.of(obj) for obj in planned.objects.values()}
    for name in sorted(observed):
        key = ObjectKey.of(observed[name])
        if name not in planned.objects or key not in keep:
            world.delete_cascade(key)
    for name in sorted(planned.objects):
        world.put(planned.objects[name])


def _render(
    xr: View,
    name: str,
    desired: Mapping[str, object],
    observed: View | None,
    apis: Apis,
    result: Plan,
) -> tuple[Obj, list[str]]:
    # `desired` is the pipeline's own fresh dict and nothing below changes what it
    # nests (metadata is rebuilt, and the world copies what it stores), so no deep copy.
    obj: Obj = {k: v for k, v in desired.items() if k != "status"}
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        return obj, ["apiVersion and kind are required"]
    shape = shape_error(obj)
    if shape is not None:
        return obj, [shape]
    meta: Obj = dict(obj.get("metadata") or {})
    obj["metadata"] = meta
    xr_key = ObjectKey.of(xr)

    if not meta.get("name"):
        existing_name = metadata(observed).get("name") if observed is not None else None
        meta["name"] = existing_name or _generated_name(xr_key, root_name(xr), name)
    meta.pop("generateName", None)

    namespace = str(meta.get("namespace") or "")
    if xr_key.namespace:
        scope = apis.is_namespaced_composite_kind(api_version, kind)
        if scope is False or (scope is None and is_cluster_scoped(api_version, kind)):
            return obj, [
                f"{kind} is cluster-scoped; a namespaced composite composes only namespaced "
                "resources, in its own namespace"
            ]
        if namespace and namespace != xr_key.namespace:
            result.events.append(
                Event(
                    "Warning",
                    REASON_COMPOSE,
                    f"composed resource {quote(name)} namespace {quote(namespace)} was "
                    f"overridden to {quote(xr_key.namespace)}: a namespaced composite composes "
                    "only into its own namespace",
                )
            )
        meta["namespace"] = xr_key.namespace
    elif not namespace and apis.is_namespaced_composite_kind(api_version, kind):
        return obj, [f"{kind} is namespaced; metadata.namespace is required"]

    meta["labels"] = {**(meta.get("labels") or {}), LABEL_COMPOSITE: root_name(xr)}
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        ANNOTATION_COMPOSITION_RESOURCE_NAME: name,
    }
    others = [r for r in meta.get("ownerReferences") or [] if r.get("controller") is not True]
    meta["ownerReferences"] = [*others, _controller_reference(xr)]
    return obj, metadata_errors(obj)


def _generated_name(xr: ObjectKey, prefix: str, resource_name: str) -> str:
    head = f"{prefix}-"[:_GENERATED_PREFIX_MAX]
    suffix = naming.digest(
        xr.api_version, xr.kind, xr.namespace, xr.name, resource_name, length=_GENERATED_SUFFIX
    )
    return head + suffix


def _controller_reference(xr: View) -> Obj:
    key = ObjectKey.of(xr)
    return {
        "apiVersion": key.api_version,
        "kind": key.kind,
        "name": key.name,
        "uid": metadata(xr).get("uid") or fake_uid(key),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _conflicts(
    xr: View, key: ObjectKey, existing: View | None, claimed_by: str | None
) -> list[str]:
    if claimed_by is not None:
        return [f"{key} is also composed as {quote(claimed_by)}"]
    if existing is None:
        return []
    controller = controller_reference(existing)
    if controller is not None and not reference_matches(controller, xr):
        return [
            f"existing {key} is controlled by {controller.get('kind')} {controller.get('name')}"
        ]
    return []


def _merge(desired: Obj, existing: View | None) -> Obj:
    """Server-side apply of the composite's intent: its fields win, status is kept.

    The kept status is shared with the stored object until `World.put` copies it.
    """
    merged = desired
    if existing is not None:
        if "status" in existing:
            merged["status"] = existing["status"]
        uid = metadata(existing).get("uid")
        if uid:
            merged["metadata"]["uid"] = uid
    return merged
