"""References the control plane cannot resolve: a name no object of the input carries.

A ModelDeployment whose `spec.priority` names no PriorityClass is held by the
fleet scheduler, which judges it by the same rule (`PriorityNotFound`: its pods
would never be created); an InferenceCluster whose kubeconfig Secret is missing
would never reach its cluster, and so would one whose Secret lacks the key it
names (crossplane-runtime reads `data[key]`, empty when absent, and
provider-kubernetes then builds no client). The render cannot know what else the real control
plane holds, so a kind is checked only when the input holds at least one object
of it: a fleet repository that carries its PriorityClasses carries all of them.
With a running world, an object of such a kind that only the world holds
(`absent`: `prune.Sync.left_behind`) does not count, since a sync with pruning
deletes it: deleting a referenced object from the repository fails as the same
sources fail without the world.

`REFERENCES` is the one table of what refers to what: adding a kind a composite
names is one row.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.core.vocabulary import INFERENCE_CLUSTER, MODEL_CACHE, MODEL_DEPLOYMENT
from modelplane_cli.render.loader import Sources
from modelplane_cli.render.world import ObjectKey, View, controller_reference


@dataclass(frozen=True)
class Reference:
    """`field` of a `kind` names an object of `target` (a dotted path; `[]` walks a list).

    `namespace_field`, relative to the referring value when it is a mapping,
    names the target's namespace; a namespaced target without one is looked up in
    the referrer's namespace. A referring value that is a mapping carries the name
    under `name`. `key_field`, relative to the referring value, names a key the target
    Secret's `data` or `stringData` must hold (`default_key` when it is not set).
    """

    kind: str
    field: str
    target: str
    namespaced: bool = False
    namespace_field: str | None = None
    key_field: str | None = None
    default_key: str = ""


REFERENCES: tuple[Reference, ...] = (
    Reference(MODEL_DEPLOYMENT, "spec.priority", "PriorityClass"),
    Reference(INFERENCE_CLUSTER, "spec.scheduling.defaultPriority", "PriorityClass"),
    Reference(INFERENCE_CLUSTER, "spec.scheduling.allowedPriorities[]", "PriorityClass"),
    Reference(
        INFERENCE_CLUSTER,
        "spec.cluster.existing.secretRef",
        "Secret",
        namespaced=True,
        namespace_field="namespace",
        key_field="key",
        default_key="kubeconfig",
    ),
    Reference(MODEL_DEPLOYMENT, "spec.model.cacheRef", MODEL_CACHE, namespaced=True),
    Reference(MODEL_CACHE, "spec.credentialsSecretRef", "Secret", namespaced=True),
)


def unresolved(
    objects: Iterable[View],
    sources: Mapping[ObjectKey, str] | None = None,
    references: Iterable[Reference] = REFERENCES,
    absent: Collection[ObjectKey] = frozenset(),
) -> list[str]:
    """One line per reference whose target is missing (`unresolved_by_object`)."""
    return [line for _, line in unresolved_by_object(objects, sources, references, absent)]


def unresolved_by_object(
    objects: Iterable[View],
    sources: Mapping[ObjectKey, str] | None = None,
    references: Iterable[Reference] = REFERENCES,
    absent: Collection[ObjectKey] = frozenset(),
) -> list[tuple[ObjectKey, str]]:
    """One line per reference whose target is missing, for kinds the input holds.

    Composed objects are skipped: a reference they carry was copied from the
    composite that composed them, which is where the mistake was made.
    `sources` maps a key to the `file:line` it was read from; as `Sources`, a line
    cites the line of the field it names where the document spells it out. Objects
    in `absent` are taken to be gone.
    """
    everything = list(objects)
    present: dict[str, dict[tuple[str, str], View]] = {}
    for obj in everything:
        key = ObjectKey.of(obj)
        if key in absent:
            continue
        present.setdefault(key.kind, {})[(key.namespace, key.name)] = obj
    found: list[tuple[ObjectKey, str]] = []
    for ref in references:
        names = present.get(ref.target)
        if names is None:
            continue
        for key, path, target, value in _referring(everything, ref):
            namespace, name = target.namespace, target.name
            scope = f"{namespace}/" if namespace else ""
            held = names.get((namespace, name))
            if held is not None:
                missing = _missing_key(value, path, ref, held)
                if missing:
                    # The key field's own line; the reference's when the key is a
                    # default the source does not spell out.
                    where = _where(sources, key, f"{path}.{ref.key_field}", path)
                    found.append((key, f"{where}{key}: {missing}"))
                continue
            known = sorted(n for ns, n in names if ns == namespace)
            hint = f" (the input has: {', '.join(known)})" if known else ""
            found.append(
                (
                    key,
                    f'{_where(sources, key, path)}{key}: {path}: "{name}": no {ref.target} '
                    f"{scope}{name} in the input{hint}",
                )
            )
    return found


def _where(sources: Mapping[ObjectKey, str] | None, key: ObjectKey, *paths: str) -> str:
    """`file:line: ` of the first field of `key` at `paths` its source spells out (of
    its document when none, or only that, is known), "" when `key` was not read."""
    if isinstance(sources, Sources):
        where = sources.field(key, *paths)
    else:
        where = sources.get(key) if sources else None
    return f"{where}: " if where else ""


def _missing_key(value: Any, path: str, ref: Reference, target: View) -> str:
    """What is wrong when the referring value names a key `target` does not hold, else ""."""
    if ref.key_field is None:
        return ""
    given = value.get(ref.key_field) if isinstance(value, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    wanted = str(given or ref.default_key)
    keys: set[str] = set()
    for part in ("data", "stringData"):
        block = target.get(part)
        if isinstance(block, Mapping):
            keys.update(str(k) for k in block)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if wanted in keys:
        return ""
    scope = f"{target.get('metadata', {}).get('namespace')}/" if ref.namespaced else ""
    name = target.get("metadata", {}).get("name")
    hint = f" (it has: {', '.join(sorted(keys))})" if keys else " (it has none)"
    return f'{path}.{ref.key_field}: "{wanted}": Secret {scope}{name} holds no key {wanted}{hint}'


def named(objects: Iterable[View], ref: Reference) -> Iterator[tuple[ObjectKey, str, ObjectKey]]:
    """Each (referrer, concrete field path, target) of `ref` among `objects` that no other
    object composed; the target's apiVersion is left empty (a reference names none)."""
    for referrer, path, target, _ in _referring(objects, ref):
        yield referrer, path, target


def _referring(
    objects: Iterable[View], ref: Reference
) -> Iterator[tuple[ObjectKey, str, ObjectKey, Any]]:
    """`named`, with the referring value itself."""
    for obj in objects:
        if obj.get("kind") != ref.kind or controller_reference(obj) is not None:
            continue
        referrer = ObjectKey.of(obj)
        for path, value in _values(obj, ref.field.split(".")):
            name, namespace = _target(value, ref, referrer)
            if name:
                yield referrer, path, ObjectKey("", ref.target, namespace, name), value


def _target(value: Any, ref: Reference, referrer: ObjectKey) -> tuple[str, str]:
    """The name and namespace ("" when cluster-scoped) a referring value names."""
    if isinstance(value, Mapping):
        name = str(value.get("name") or "")  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        given = value.get(ref.namespace_field) if ref.namespace_field else None  # pyright: ignore[reportUnknownMemberType]
        namespace = str(given or referrer.namespace) if ref.namespaced else ""
        return name, namespace
    if isinstance(value, str):
        return value, referrer.namespace if ref.namespaced else ""
    return "", ""


def _values(value: Any, parts: list[str], path: str = "") -> Iterator[tuple[str, Any]]:
    """Every value at a dotted path, with its concrete path (`a.b[2]`)."""
    if not parts:
        yield path, value
        return
    head, rest = parts[0], parts[1:]
    walk_list = head.endswith("[]")
    name = head.removesuffix("[]")
    if not isinstance(value, Mapping) or name not in value:
        return
    child: Any = value[name]
    here = f"{path}.{name}" if path else name
    if not walk_list:
        yield from _values(child, rest, here)
        return
    if isinstance(child, list):
        for index, item in enumerate(child):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            yield from _values(item, rest, f"{here}[{index}]")
