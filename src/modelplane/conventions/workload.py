"""How a rendered workload's pods gang up, as the conventions see them.

The workload's kind says where its pod templates are and how its pods group
(`modelplane.core.kinds`), read from the manifest itself, so the renderer and the
conventions share no hidden state beyond the typed workload they hand over.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from modelplane.core.kinds import PodSet, RenderedWorkload, WorkloadKind
from modelplane.core.kinds.base import mapping


@dataclass(frozen=True)
class Unit:
    """One pod set of a workload, named for messages (`title`) and by its role."""

    title: str
    role: str
    pod_set: PodSet


@dataclass
class Workload:
    manifest: dict[str, Any]
    kind: WorkloadKind
    name: str
    namespace: str | None
    units: list[Unit]

    @property
    def title(self) -> str:
        return f"{self.kind.kind} {self.name}"


def child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]` as a dict, created when absent."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return cast(dict[str, Any], value)


def view(workload: RenderedWorkload) -> Workload:
    """The conventions' view of a rendered workload, over a private copy of its manifest.

    Its sites share their dicts with that copy, so the conventions edit it in place.
    """
    manifest = cast(dict[str, Any], _plain(workload.manifest))
    metadata = child(manifest, "metadata")
    name, namespace = metadata.get("name"), metadata.get("namespace")
    seen = Workload(
        manifest=manifest,
        kind=workload.kind,
        name=name if isinstance(name, str) else "",
        namespace=namespace if isinstance(namespace, str) else None,
        units=[],
    )
    for pod_set in workload.kind.pod_sets(seen.name, mapping(manifest.get("spec")), fill=True):
        # A block of its own (KServe's prefill) is its own role.
        title = f"{seen.title} ({pod_set.part})" if pod_set.part else seen.title
        seen.units.append(Unit(title, pod_set.part or workload.role, pod_set))
    return seen


# What a manifest is mostly made of, told by its exact type before the abstract
# classes below are asked (which costs more than the copy of a scalar).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: object) -> object:
    """A deep copy made of plain dicts and lists."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, dict):  # a Mapping, asked for first: most containers are dicts
        return {str(k): _plain(v) for k, v in cast(dict[Any, Any], value).items()}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in cast(Mapping[Any, Any], value).items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in cast(Sequence[Any], value)]
    return value
