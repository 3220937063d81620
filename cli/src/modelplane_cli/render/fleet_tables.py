"""The summary's fleet sections: why each replica is where it is, each cluster's
capacity and queues, and the Helm Releases a Managed stack installs.

- **Why here**: the fleet scheduler says why it placed a replica in its
  `ReplicaPlaced` event; a placement that needed no special reason followed the
  default rules (best fit, then spread: `modelplane.scheduling.fill`). A replica
  placed before this render (no event) is kept where it runs.
- **Capacity**: each InferenceCluster's `status.capacity` (`fleetmap`): per pool
  and device, total, committed and free; per queue, its GPU quota and use.
- **Releases**: the provider-helm Releases an InferenceCluster composes for its
  Managed stack, with chart, version, namespace and whether they are Ready.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modelplane.core.vocabulary import INFERENCE_CLUSTER, MODEL_DEPLOYMENT, Reason
from modelplane_cli.render.fleetmap import fleet_map, pools_text
from modelplane_cli.render.world import ObjectKey, View, World

Table = Callable[[Sequence[str], Sequence[Sequence[str]]], str]

DEFAULT_WHY = (
    "best fit, then spread: the least capable pool with room, on the cluster hosting the "
    "fewest of its replicas"
)
KEPT_WHY = "kept where it runs (placed before this render)"
_PLACED = re.compile(
    r"Placed replica (?P<replica>\S+) on cluster \S+ \(pool [^)]*\)(?::\s*(?P<why>.*))?$"
)
_HELM_GROUPS = frozenset({"helm.crossplane.io", "helm.m.crossplane.io"})


def why_here(objects: Sequence[View], events: Sequence[View], table: Table) -> str:
    """One WHY HERE table per ModelDeployment with placements."""
    reasons: dict[tuple[str, str], str] = {}
    for event in events:
        if event.get("reason") != Reason.REPLICA_PLACED:
            continue
        ref: Mapping[str, Any] = event.get("involvedObject") or {}
        found = _PLACED.search(str(event.get("message", "")))
        if found is None:
            continue
        deployment = f"{ref.get('namespace')}/{ref.get('name')}"
        reasons[(deployment, found["replica"])] = found["why"] or DEFAULT_WHY
    sections: list[str] = []
    for obj in objects:
        if obj.get("kind") != MODEL_DEPLOYMENT:
            continue
        key = ObjectKey.of(obj)
        deployment = f"{key.namespace}/{key.name}"
        rows = [
            [
                str(p.get("replica", "-")),
                str(p.get("cluster", "-")),
                pools_text(p.get("pools")),
                reasons.get((deployment, str(p.get("replica"))), KEPT_WHY),
            ]
            for p in (obj.get("status") or {}).get("placements") or []
            if isinstance(p, Mapping)
        ]
        if rows:
            sections.append(
                f"WHY HERE  {key}\n" + table(["REPLICA", "CLUSTER", "POOLS", "WHY"], rows)
            )
    return "\n\n".join(sections)


def capacity(objects: Sequence[View], table: Table) -> str:
    """CAPACITY (every pool's devices) and QUEUES (every queue's GPU quota)."""
    fleet = fleet_map(o for o in objects if o.get("kind") == INFERENCE_CLUSTER)
    rows = [
        [
            cluster.name,
            pool.name,
            pool.class_name or "-",
            str(pool.nodes),
            devices.name,
            str(devices.total),
            str(devices.committed),
            str(devices.free),
        ]
        for cluster in fleet.clusters
        for pool in cluster.pools
        for devices in pool.devices
    ]
    queues = [
        [
            cluster.name,
            queue.name,
            queue.provider or "-",
            "-" if queue.quota is None else str(queue.quota),
            "-" if queue.used is None else str(queue.used),
        ]
        for cluster in fleet.clusters
        for queue in cluster.queues
    ]
    sections: list[str] = []
    if rows:
        headers = ["CLUSTER", "POOL", "CLASS", "NODES", "DEVICE", "TOTAL", "COMMITTED", "FREE"]
        sections.append("CAPACITY\n" + table(headers, rows))
    if queues:
        headers = ["CLUSTER", "QUEUE", "PROVIDER", "GPU QUOTA", "GPU USED"]
        sections.append("QUEUES\n" + table(headers, queues))
    return "\n\n".join(sections)


def releases(world: World, composites: Sequence[View], table: Table) -> str:
    """RELEASES: what each InferenceCluster's Managed stack installs through Helm."""
    rows: list[list[str]] = []
    for xr in composites:
        if xr.get("kind") != INFERENCE_CLUSTER:
            continue
        for key in world.controlled_by(xr):
            obj = world.get(key)
            if obj is None or key.kind != "Release" or key.group not in _HELM_GROUPS:
                continue
            provider: Mapping[str, Any] = (obj.get("spec") or {}).get("forProvider") or {}
            chart: Mapping[str, Any] = provider.get("chart") or {}
            rows.append(
                [
                    ObjectKey.of(xr).name,
                    key.name,
                    str(chart.get("name", "-")),
                    str(chart.get("version", "-")),
                    str(provider.get("namespace", "-")),
                    _ready(obj),
                ]
            )
    if not rows:
        return ""
    headers = ["CLUSTER", "RELEASE", "CHART", "VERSION", "NAMESPACE", "READY"]
    return "RELEASES\n" + table(headers, rows)


def _ready(obj: View) -> str:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return str(condition.get("status", "-"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return "-"
