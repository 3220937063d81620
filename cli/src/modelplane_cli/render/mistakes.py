"""One mistake, one report, where it was made.

A bad value in a ModelDeployment's template reaches every replica's workload, so
a workload cluster refuses every Object built from it, and every replica and the
deployment say so in their conditions: one typo, many lines. Here the refused
Objects are traced back: each refused field's value is looked up in the spec of
the composite at the root of the Object's owners; where it is found, the mistake
is that field, and every Object refused for it is one report, at the root's
source with its field path and value. A composite's condition that only repeats
a refusal already reported is not reported again.

A value not found in the root's spec was not written by its author (a platform
template made it); such refusals stay one line per Object.

A mistake in an InferenceCluster's scheduling or tenancy block (a queue template
naming an unknown variable, say) is made once, on the cluster, yet every replica
placed there refuses to render with it and its deployment quotes each replica. The
cluster's own condition is the report, at the cluster's source; its issues are
echoes, so the replicas' and deployments' repeats of them are not reported again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane_models import InferenceCluster

from modelplane.conventions.parse import parse_scheduling
from modelplane.conventions.tenancy import read_tenancy
from modelplane.core.issues import InvalidInputError, Issue, errors, parse_object
from modelplane.core.vocabulary import GROUP, INFERENCE_CLUSTER, ConditionType
from modelplane.provisioning import kubernetes_version
from modelplane_cli.render.apiservers import WorkloadApiServers
from modelplane_cli.render.simulate import OBJECT_GROUPS
from modelplane_cli.render.world import ObjectKey, View, World, controller_reference
from modelplane_cli.schema.errors import RULES_SKIPPED

# A segment of a Kubernetes field path: `.name`, `[0]` or `[key]`.
_SEGMENT = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


@dataclass
class Mistakes:
    """Refusals, one line per mistake, and the refusal messages that conditions echo."""

    lines: list[str] = field(default_factory=list)
    echoes: list[str] = field(default_factory=list)

    def echoed(self, message: str) -> bool:
        """Whether a condition's message only repeats a refusal already reported."""
        return any(echo in message for echo in self.echoes)


@dataclass
class _Refusal:
    root: ObjectKey
    path: str
    value: str
    message: str
    objects: list[str] = field(default_factory=list)
    clusters: set[str] = field(default_factory=set)


def locate(
    rejected: Sequence[str],
    objects: Sequence[View],
    servers: WorkloadApiServers,
    sources: Mapping[ObjectKey, str],
) -> Mistakes:
    """`rejected` ("Object ns/name: message" lines) grouped by the mistake behind them."""
    found = Mistakes()
    _cluster_settings(objects, sources, found)
    if not rejected:
        return found
    world = World(objects)
    grouped: dict[tuple[ObjectKey, str, str, str], _Refusal] = {}
    for line in rejected:
        where, _, message = line.partition(": ")
        found.echoes.append(_essence(message))
        key = _object_key(world, where)
        obj = world.get(key) if key is not None else None
        if obj is None or key is None:
            found.lines.append(f"{line} (the API server would refuse it)")
            continue
        root = _root(world, key)
        root_obj = world.get(root)
        manifest: Mapping[str, Any] = ((obj.get("spec") or {}).get("forProvider") or {}).get(
            "manifest"
        ) or {}
        errors = [e for e in servers.field_errors(world, obj) if e.message != RULES_SKIPPED]
        located = False
        for error in errors:
            value = _at(manifest, error.path)
            if not isinstance(value, str | int | float) or root_obj is None or root == key:
                continue
            paths = _likeliest(_paths_of(root_obj.get("spec"), str(value), "spec"), error.path)
            if not paths:
                continue
            located = True
            text = _with_value(error.message, str(value))
            refusal = grouped.setdefault(
                (root, paths[0], str(value), text),
                _Refusal(root, paths[0], str(value), text),
            )
            refusal.objects.append(f"{manifest.get('kind')} {_name(manifest)}")
            cluster = (obj.get("spec") or {}).get("providerConfigRef", {}).get("name")
            if cluster:
                refusal.clusters.add(str(cluster))
        if not located:
            found.lines.append(f"{line} (the API server would refuse it)")
    for refusal in grouped.values():
        source = sources.get(refusal.root)
        prefix = f"{source}: " if source else ""
        count = len(refusal.objects)
        what = (
            refusal.objects[0] if count == 1 else f"{count} workloads ({refusal.objects[0]}, ...)"
        )
        clusters = ", ".join(sorted(refusal.clusters)) or "its cluster"
        found.lines.append(
            f"{prefix}{refusal.root}: {refusal.path}: {refusal.message} "
            f"(the API server of {clusters} would refuse {what})"
        )
    return found


def _cluster_settings(
    objects: Sequence[View], sources: Mapping[ObjectKey, str], found: Mistakes
) -> None:
    """Each InferenceCluster's failed SchedulingConfigured or TenancyConfigured, one
    line at its source, with its issues as echoes of what its replicas repeat."""
    for obj in objects:
        if obj.get("kind") != INFERENCE_CLUSTER or not str(obj.get("apiVersion", "")).startswith(
            f"{GROUP}/"
        ):
            continue
        conditions = (obj.get("status") or {}).get("conditions") or []
        failed: list[Mapping[str, Any]] = [
            c
            for c in conditions
            if isinstance(c, Mapping)
            and c.get("type")
            in (ConditionType.SCHEDULING_CONFIGURED, ConditionType.TENANCY_CONFIGURED)
            and c.get("status") == "False"
        ]
        if not failed:
            continue
        try:
            cluster = parse_object(InferenceCluster, obj)
        except InvalidInputError:
            continue  # its function reports what does not read
        echoes = [str(issue) for issue in errors(_settings_issues(cluster))]
        key = ObjectKey.of(obj)
        source = sources.get(key)
        prefix = f"{source}: " if source else ""
        for condition in failed:
            message = str(condition.get("message", ""))
            # Only a condition that says what the block's reading says is replaced;
            # anything else stays the condition line `failures` reports.
            if not any(echo in message for echo in echoes):
                continue
            found.lines.append(
                f"{prefix}{key}: {condition.get('type')}=False "
                f"({condition.get('reason')}): {message}"
            )
        found.echoes.extend(echoes)


def _settings_issues(cluster: InferenceCluster) -> list[Issue]:
    """What compose-inference-cluster finds in the cluster's scheduling and tenancy
    blocks, read by the same readers the replicas' renderer uses."""
    spec = cluster.spec
    if spec is None:
        return []
    scheduling = spec.scheduling if "scheduling" in spec.model_fields_set else None
    _, issues = parse_scheduling(scheduling, kubernetes_version(cluster))
    name = (cluster.metadata.name if cluster.metadata else None) or ""
    _, tenancy_issues = read_tenancy(spec.tenancy, name)
    return [*issues, *tenancy_issues]


def _essence(message: str) -> str:
    """The API server's own words in a provider's message, which conditions quote."""
    for prefix in ("create failed: ", "update failed: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def _object_key(world: World, where: str) -> ObjectKey | None:
    kind, _, rest = where.partition(" ")
    namespace, _, name = rest.rpartition("/")
    for key in world.named(kind, name, namespace):
        if key.group in OBJECT_GROUPS:
            return key
    return None


def _root(world: World, key: ObjectKey) -> ObjectKey:
    """The composite at the top of `key`'s controllers."""
    seen = {key}
    current = key
    while True:
        obj = world.get(current)
        ref = controller_reference(obj) if obj is not None else None
        owner = world.find_owner(ref, current) if ref is not None else None
        if owner is None:
            return current
        parent = ObjectKey.of(owner)
        if parent in seen:
            return current
        seen.add(parent)
        current = parent


def _at(value: Any, path: str) -> Any:
    """The value at a Kubernetes field path (`a.b[0].c[key]`), or None."""
    for match in _SEGMENT.finditer(path):
        name = match.group(1) if match.group(1) is not None else match.group(2)
        if isinstance(value, list) and name.isdigit():
            items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
            index = int(name)
            value = items[index] if index < len(items) else None
        elif isinstance(value, Mapping):
            value = value.get(name)  # pyright: ignore[reportUnknownMemberType]
        else:
            return None
    return value  # pyright: ignore[reportUnknownVariableType]


def _likeliest(paths: Iterator[str], refused: str) -> list[str]:
    """`paths` (where the refused value occurs in the root's spec), likeliest first:
    the most trailing field names in common with the refused field's path, then by
    name. A value is often written in several places (a `1` as a device count and as
    an argument), and the workload's path (`spec.template.containers[0].args[0]`) ends
    as the template's does, though its list indices may differ (Modelplane puts its
    own env entries first)."""
    tail = _names(refused)

    def shared(path: str) -> int:
        names = _names(path)
        count = 0
        while count < min(len(names), len(tail)) and names[-1 - count] == tail[-1 - count]:
            count += 1
        return count

    return sorted(paths, key=lambda path: (-shared(path), path))


def _names(path: str) -> list[str]:
    """A field path's segments, every list index the same (`[]`)."""
    segments = [match.group(1) or match.group(2) or "" for match in _SEGMENT.finditer(path)]
    return ["[]" if segment.isdigit() else segment for segment in segments]


def _paths_of(value: Any, wanted: str, path: str) -> Iterator[str]:
    """Every path under `value` whose leaf is `wanted` (compared as text)."""
    if isinstance(value, Mapping):
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            yield from _paths_of(item, wanted, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            yield from _paths_of(item, wanted, f"{path}[{index}]")
    elif (
        isinstance(value, str | int | float)
        and not isinstance(value, bool)
        and str(value) == wanted
    ):
        yield path


def _with_value(message: str, value: str) -> str:
    """The API server's message, naming the value when it does not already."""
    return message if f'"{value}"' in message else f'"{value}": {message}'


def _name(manifest: Mapping[str, Any]) -> str:
    meta: Mapping[str, Any] = manifest.get("metadata") or {}
    return str(meta.get("name", ""))
