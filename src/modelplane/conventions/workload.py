"""How a rendered workload's pods gang up, as the conventions see them.

The workload kind says where its pod templates are and how its pods group
(`modelplane.core.kinds`); everything is read from the manifest itself, so the
renderer and the conventions share no hidden state.
"""

from dataclasses import dataclass
from typing import Any, cast

from modelplane.core.kinds import PodSet, WorkloadKind, workload_kind
from modelplane.core.kinds.base import mapping
from modelplane.core.vocabulary import LABEL_ROLE


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


def classify(manifest: dict[str, Any]) -> Workload | None:
    """The workload view of a manifest, or None for kinds that carry no pods.

    Its sites share their dicts with `manifest`, so the conventions edit it in place.
    """
    kind = workload_kind(manifest)
    if kind is None:
        return None
    metadata = child(manifest, "metadata")
    name, namespace = metadata.get("name"), metadata.get("namespace")
    role = mapping(metadata.get("labels")).get(LABEL_ROLE)
    workload = Workload(
        manifest=manifest,
        kind=kind,
        name=name if isinstance(name, str) else "",
        namespace=namespace if isinstance(namespace, str) else None,
        units=[],
    )
    role_name = role if isinstance(role, str) else ""
    for pod_set in kind.pod_sets(workload.name, mapping(manifest.get("spec")), fill=True):
        # A block of its own (KServe's prefill) is its own role.
        title = f"{workload.title} ({pod_set.part})" if pod_set.part else workload.title
        workload.units.append(Unit(title, pod_set.part or role_name, pod_set))
    return workload
