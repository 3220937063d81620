"""Composed resources: observing them, rendering their metadata, applying and collecting them.

Mirrors the second half of Crossplane v2.3's `FunctionComposer.Compose`
(`internal/controller/apiextensions/composite/composition_functions.go`):

- **observe**: the composed resources are the ones `spec.crossplane.resourceRefs`
  lists (`ExistingComposedResourceObserver`): a reference to nothing is skipped,
  as is an object another controller owns.
- **plan**: every desired resource's metadata is rendered
  (`RenderComposedResourceMetadata`); an error here stops the compose before
  anything is deleted or applied. What the API server would refuse on apply (an
  Invalid: schema, a second controller) is noted per resource, not fatal.
- **collect** (`garbage`): what is observed but no longer desired is deleted
  first, stopping at the first delete that fails.
- **references**: then the composite's `spec.crossplane.resourceRefs` are replaced
  by the desired set (`UpdateResourceRefs`), before anything is created.
- **apply**: then each desired resource is applied on its own; a refused one is
  reported (Warning event, the composite not Synced) and the others still land.

A resource without a name is named as Crossplane names it (`childnames`), and
keeps the `generateName` it was named from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from modelplane.core.vocabulary import ANNOTATION_COMPOSITION_RESOURCE_NAME, LABEL_COMPOSITE
from modelplane_cli.render import childnames
from modelplane_cli.render.admission import Admission, metadata_errors
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.merge import merge, resource_refs
from modelplane_cli.render.pipeline import DesiredResource, Event
from modelplane_cli.render.shapes import shape_error, without_unreadable_metadata
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
from modelplane_cli.schema.errors import go_quote

# The event reason of a namespace override (`reasonNamespaceOverridden`, reconciler.go).
REASON_NAMESPACE_OVERRIDDEN = "NamespaceOverridden"


@dataclass
class Plan:
    """One composite's desired state, rendered: what to apply, and what cannot be.

    `errors` stop the compose before anything is deleted or applied: only the
    checks Crossplane's `Compose` itself makes while it builds the desired
    resources (a resource it cannot read, scope, a foreign controller reference,
    the name); `Compose` returns at the first, so the reconcile reports only that
    one. `refused` are the resources the API server would answer Invalid on apply
    (schema, labels and annotations, a second controller), each reported on itself.
    """

    objects: dict[str, Obj] = field(default_factory=dict[str, Obj])
    refused: dict[str, str] = field(default_factory=dict[str, str])
    events: list[Event] = field(default_factory=list[Event])
    errors: list[str] = field(default_factory=list[str])


def root_name(xr: View) -> str:
    """The root composite's name, which Crossplane carries down in the composite label."""
    return labels_of(xr).get(LABEL_COMPOSITE) or str(metadata(xr).get("name", ""))


def observe(world: World, xr: View) -> tuple[dict[str, View], list[str]]:
    """The composite's composed resources keyed by composition-resource-name, and errors.

    They are what `spec.crossplane.resourceRefs` lists, as Crossplane reads them. A
    composite that has never been reconciled has no references (a document written
    by hand, an export of a composite Crossplane never saw): for it, the objects
    its controller reference names are observed, and documents written without
    owner references but with Crossplane's label and annotation are adopted by the
    root composite the label names, unless one it controls already has that
    composition-resource-name.
    """
    refs = resource_refs(xr)
    if refs is not None:
        return _observe_refs(world, xr, refs)
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


def _observe_refs(
    world: World, xr: View, refs: list[Mapping[str, Any]]
) -> tuple[dict[str, View], list[str]]:
    xr_key = ObjectKey.of(xr)
    observed: dict[str, View] = {}
    errors: list[str] = []
    for ref in refs:
        name = str(ref.get("name") or "")
        if not name:
            continue
        # A namespaced composite composes only in its own namespace; its references
        # carry none.
        namespace = xr_key.namespace or str(ref.get("namespace") or "")
        key = ObjectKey(str(ref.get("apiVersion", "")), str(ref.get("kind", "")), namespace, name)
        obj = world.get(key)
        if obj is None and namespace:
            # A cluster-scoped kind (a namespaced composite's function gave it a
            # namespace): the client ignores the namespace of a Get for one.
            key = ObjectKey(key.api_version, key.kind, "", name)
            obj = world.get(key)
        if obj is None:
            continue
        controller = controller_reference(obj)
        if controller is not None and not reference_matches(controller, xr):
            continue
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
        # Crossplane's errAnonymousCD.
        errors.append(
            "encountered composed resource without required "
            f"{go_quote(ANNOTATION_COMPOSITION_RESOURCE_NAME)} annotation"
        )
    elif name in observed:
        errors.append(
            f"composed resources {ObjectKey.of(observed[name])} and {key} are both named "
            f"{go_quote(name)}"
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
        obj, error = _render(xr, name, desired[name].obj, observed.get(name), apis, result)
        if error is not None:
            result.errors.append(error)
            continue
        key = ObjectKey.of(obj)
        existing = world.get(key)
        # Labels, annotations and the namespace are the API server's to check, on
        # the apply: an Invalid of this resource alone (Compose never looks at them).
        refused = metadata_errors(obj) or _conflicts(xr, key, existing, targets.get(key))
        targets[key] = name
        if not refused:
            obj = merge(ObjectKey.of(xr), obj, existing)
            if apis.is_composite(key.api_version, key.kind):
                # The API server gives every new object a uid; owner references need it.
                obj["metadata"].setdefault("uid", fake_uid(key))
                obj, refused = admission.admit(obj)
        if refused:
            result.refused[name] = invalid(key, refused)
        result.objects[name] = obj
    return result


def invalid(key: ObjectKey, errors: list[str]) -> str:
    """The API server's Invalid message for an object, as apimachinery formats it."""
    detail = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
    kind = f"{key.kind}.{key.group}" if key.group else key.kind
    return f'{kind} "{key.name}" is invalid: {detail}'


def references(world: World, xr: View, planned: Plan, admission: Admission) -> None:
    """Replace the composite's `spec.crossplane.resourceRefs` with the desired set.

    The write is stored whatever admission's verdict, so it is only defaulted
    (`Admission.defaulted`, the object `admit` would store): a composite created
    without `spec.crossplane` gains its defaults with its first refs. When the
    stored composite already lists exactly these references the write would change
    nothing, and is not made: every composite in the world was stored admitted (its
    spec by `admit`, its status by `admit_status`), and defaulting an admitted
    object again gives it back unchanged (defaulting is idempotent), so `World.put`
    would find it equal (design/render-performance.md).
    """
    xr_key = ObjectKey.of(xr)
    refs: list[Obj] = []
    for obj in planned.objects.values():
        key = ObjectKey.of(obj)
        ref: Obj = {"apiVersion": key.api_version, "kind": key.kind, "name": key.name}
        # A namespaced composite's references carry no namespace (its schema has none).
        if key.namespace and not xr_key.namespace:
            ref["namespace"] = key.namespace
        refs.append(ref)
    refs.sort(key=lambda r: str(r["apiVersion"]) + str(r["kind"]) + str(r["name"]))
    stored = world.get(xr_key)
    if stored is None:
        return
    crossplane = (stored.get("spec") or {}).get("crossplane")
    if isinstance(crossplane, Mapping) and crossplane.get("resourceRefs") == refs:
        return
    spec: Obj = dict(stored.get("spec") or {})
    spec["crossplane"] = {**(spec.get("crossplane") or {}), "resourceRefs": refs}
    # Stored whatever the verdict (as before), so the verdict is not worked out.
    world.put(admission.defaulted({**stored, "spec": spec}))


def apply(world: World, planned: Plan) -> None:
    """Write every planned object the API server would accept."""
    for name in sorted(planned.objects):
        if name not in planned.refused:
            world.put(planned.objects[name])


def _render(
    xr: View,
    name: str,
    desired: Mapping[str, object],
    observed: View | None,
    apis: Apis,
    result: Plan,
) -> tuple[Obj, str | None]:
    # `desired` is the pipeline's own fresh dict and nothing below changes what it
    # nests (metadata is rebuilt, and the world copies what it stores), so no deep copy.
    obj: Obj = {k: v for k, v in desired.items() if k != "status"}
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        # Render's own words under errFmtUnmarshalDesiredCD: Crossplane's FromStruct
        # cannot fail here and the resource fails later, at scope or apply.
        return (
            obj,
            f"cannot unmarshal desired composed resource {go_quote(name)} from "
            "RunFunctionResponse: apiVersion and kind are required",
        )
    if isinstance(obj.get("metadata"), dict):
        obj["metadata"] = without_unreadable_metadata(cast(Obj, obj["metadata"]))
    shape = shape_error(obj)
    if shape is not None:
        return obj, f"cannot apply composed resource {go_quote(name)}: {shape}"
    meta: Obj = dict(obj.get("metadata") or {})
    obj["metadata"] = meta
    xr_key = ObjectKey.of(xr)

    if observed is not None:
        # A composed resource keeps the name and namespace it was created with for as
        # long as its composition-resource-name is desired, whatever the function now
        # calls it: Crossplane takes both from the observed object
        # (`composition_functions.go`, "maintain its name and namespace").
        kept = metadata(observed)
        meta["name"] = kept.get("name")
        for field in ("namespace", "generateName"):
            if kept.get(field):
                meta[field] = kept[field]
            else:
                meta.pop(field, None)

    namespace = str(meta.get("namespace") or "")
    if xr_key.namespace:
        scope = apis.is_namespaced_composite_kind(api_version, kind)
        cluster_scoped = scope is False or (scope is None and is_cluster_scoped(api_version, kind))
        # Crossplane checks the scope only of a resource the function gave no
        # namespace (`composition_functions.go`); one with a namespace is applied.
        if cluster_scoped and not namespace:
            return obj, (
                f"cannot apply cluster scoped composed resource {go_quote(name)} (a {kind} named "
                f"{meta.get('name', '')}) for a namespaced composite resource."
            )
        if namespace and namespace != xr_key.namespace:
            # Crossplane's reasonNamespaceOverridden and errFmtNamespaceOverridden.
            result.events.append(
                Event(
                    "Warning",
                    REASON_NAMESPACE_OVERRIDDEN,
                    f"cannot create composed resource {go_quote(name)} in namespace "
                    f"{go_quote(namespace)}, using XR namespace {go_quote(xr_key.namespace)} "
                    "instead",
                )
            )
        meta["namespace"] = xr_key.namespace
        if cluster_scoped:
            # The API server clears the namespace of a cluster-scoped object it stores.
            del meta["namespace"]
    elif not namespace and apis.is_namespaced_composite_kind(api_version, kind):
        return obj, (
            f"cannot apply composed resource {go_quote(name)}: {kind} is namespaced; "
            "metadata.namespace is required"
        )

    meta["labels"] = {**(meta.get("labels") or {}), LABEL_COMPOSITE: root_name(xr)}
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        ANNOTATION_COMPOSITION_RESOURCE_NAME: name,
    }
    owner = _controller_reference(xr)
    references = list(meta.get("ownerReferences") or [])
    foreign = next(
        (r for r in references if r.get("controller") is True and r.get("uid") != owner["uid"]),
        None,
    )
    if foreign is not None:
        # crossplane-runtime's AddControllerReference refuses a second controller.
        return obj, (
            f"cannot render metadata for composed resource {go_quote(name)}: cannot set controller "
            f"reference: {meta.get('name', '')} is already controlled by {foreign.get('kind')} "
            f"{foreign.get('name')} (UID {foreign.get('uid')})"
        )
    others = [r for r in references if r.get("uid") != owner["uid"]]
    meta["ownerReferences"] = [*others, owner]
    if not meta.get("name"):
        # `RenderComposedResourceMetadata` then `GenerateName`: one deterministic try.
        if not meta.get("generateName"):
            meta["generateName"] = f"{root_name(xr)}-"
        meta["name"] = childnames.child_name(str(meta["generateName"]), str(owner["uid"]), name)
    return obj, _name_error(name, obj)


def _name_error(name: str, obj: View) -> str | None:
    key = ObjectKey.of(obj)
    if childnames.valid_name(key.name, key.group, key.kind):
        return None
    return (
        f"cannot apply composed resource {go_quote(name)} because it has an invalid name "
        f"{go_quote(key.name)}. Must be a valid RFC 1123 subdomain name."
    )


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
        return [f"{key} is also composed as {go_quote(claimed_by)}"]
    if existing is None:
        return []
    controller = controller_reference(existing)
    if controller is not None and not reference_matches(controller, xr):
        return [
            f"existing {key} is controlled by {controller.get('kind')} {controller.get('name')}"
        ]
    return []
