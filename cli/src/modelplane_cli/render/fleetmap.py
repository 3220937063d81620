"""The fleet as a picture sees it: clusters with their pools, replicas, gateways, routes.

Read from the rendered world only: an InferenceCluster's `status.capacity` (each
pool's devices, total and committed; each queue's quota and use), each
ModelDeployment's `status.placements`, and each ModelService's
`status.endpoints` behind the InferenceGateway its `spec.gatewayRef` names. The
summary's capacity table and `-o html` draw from this one shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.core.vocabulary import (
    INFERENCE_CLUSTER,
    INFERENCE_GATEWAY,
    MODEL_DEPLOYMENT,
    MODEL_SERVICE,
)
from modelplane_cli.render.world import ObjectKey, View, labels_of


@dataclass(frozen=True)
class Devices:
    name: str
    total: int
    committed: int

    @property
    def free(self) -> int:
        return self.total - self.committed


@dataclass(frozen=True)
class Pool:
    name: str
    class_name: str
    nodes: int
    devices: tuple[Devices, ...]

    def fill(self) -> float:
        """The committed share of the pool's devices, 0 to 1 (above 1 when overcommitted)."""
        total = sum(d.total for d in self.devices)
        return sum(d.committed for d in self.devices) / total if total else 0.0


@dataclass(frozen=True)
class Queue:
    name: str
    provider: str
    quota: int | None
    used: int | None


@dataclass(frozen=True)
class Replica:
    name: str
    deployment: str  # namespace/name
    cluster: str
    pools: str
    serving: bool


@dataclass
class Cluster:
    name: str
    labels: Mapping[str, str]
    pools: list[Pool] = field(default_factory=list)
    queues: list[Queue] = field(default_factory=list)
    replicas: list[Replica] = field(default_factory=list)


@dataclass(frozen=True)
class Route:
    service: str  # namespace/name
    replica: str  # "" for an external backend
    cluster: str
    url: str
    weight: int


@dataclass
class Gateway:
    name: str
    address: str
    cluster: str
    routes: list[Route] = field(default_factory=list)


@dataclass
class FleetMap:
    clusters: list[Cluster]
    deployments: list[tuple[str, int]]  # namespace/name, wanted replicas
    gateways: list[Gateway]


def fleet_map(objects: Iterable[View]) -> FleetMap:
    everything = sorted(objects, key=ObjectKey.of)
    clusters = {
        str(ObjectKey.of(o).name): _cluster(o) for o in everything if _is(o, INFERENCE_CLUSTER)
    }
    deployments: list[tuple[str, int]] = []
    for obj in everything:
        if not _is(obj, MODEL_DEPLOYMENT):
            continue
        key = ObjectKey.of(obj)
        name = f"{key.namespace}/{key.name}"
        wanted = (obj.get("spec") or {}).get("replicas")
        deployments.append((name, wanted if isinstance(wanted, int) else 0))
        for p in (obj.get("status") or {}).get("placements") or []:
            if not isinstance(p, Mapping):
                continue
            replica = Replica(
                str(p.get("replica", "")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
                name,
                str(p.get("cluster", "")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
                pools_text(p.get("pools")),  # pyright: ignore[reportUnknownMemberType]
                p.get("serving") is True,  # pyright: ignore[reportUnknownMemberType]
            )
            cluster = clusters.setdefault(replica.cluster, Cluster(replica.cluster, {}))
            cluster.replicas.append(replica)
    gateways = {
        ObjectKey.of(o).name: Gateway(
            ObjectKey.of(o).name,
            str((o.get("status") or {}).get("address") or ""),
            str(((o.get("spec") or {}).get("clusterRef") or {}).get("name") or ""),
        )
        for o in everything
        if _is(o, INFERENCE_GATEWAY)
    }
    for obj in everything:
        if not _is(obj, MODEL_SERVICE):
            continue
        key = ObjectKey.of(obj)
        gateway_name = str(((obj.get("spec") or {}).get("gatewayRef") or {}).get("name") or "")
        gateway = gateways.setdefault(gateway_name, Gateway(gateway_name, "", ""))
        for e in (obj.get("status") or {}).get("endpoints") or []:
            if isinstance(e, Mapping):
                gateway.routes.append(_route(f"{key.namespace}/{key.name}", e))  # pyright: ignore[reportUnknownArgumentType]
    return FleetMap(
        [clusters[n] for n in sorted(clusters)],
        deployments,
        [gateways[n] for n in sorted(gateways)],
    )


def pools_text(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    return str(value or "-")


def _is(obj: View, kind: str) -> bool:
    return obj.get("kind") == kind and str(obj.get("apiVersion", "")).startswith("modelplane.ai/")


def _cluster(obj: View) -> Cluster:
    capacity: Mapping[str, Any] = (obj.get("status") or {}).get("capacity") or {}
    declared = {
        str(p.get("name")): p
        for p in (obj.get("spec") or {}).get("nodePools") or []
        if isinstance(p, Mapping)
    }
    cluster = Cluster(ObjectKey.of(obj).name, dict(labels_of(obj)))
    for pool in capacity.get("pools") or []:
        if not isinstance(pool, Mapping):
            continue
        name = str(pool.get("name", ""))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        devices = tuple(
            Devices(str(d), _int(v.get("total")), _int(v.get("committed")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            for d, v in sorted((pool.get("devices") or {}).items())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]
            if isinstance(v, Mapping)
        )
        cluster.pools.append(
            Pool(
                name,
                str((declared.get(name) or {}).get("className", "")),
                _int(pool.get("nodes")),  # pyright: ignore[reportUnknownMemberType]
                devices,
            )
        )
    for queue in capacity.get("queues") or []:
        if not isinstance(queue, Mapping):
            continue
        gpu: Mapping[str, Any] = queue.get("gpu") or {}  # pyright: ignore[reportUnknownMemberType, reportAssignmentType]
        cluster.queues.append(
            Queue(
                str(queue.get("name", "")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
                str(queue.get("provider", "")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
                gpu.get("quota") if isinstance(gpu.get("quota"), int) else None,
                gpu.get("used") if isinstance(gpu.get("used"), int) else None,
            )
        )
    return cluster


def _route(service: str, entry: Mapping[str, Any]) -> Route:
    return Route(
        service,
        "" if entry.get("external") else str(entry.get("replica", "")),
        str(entry.get("cluster", "")),
        str(entry.get("url", "")),
        _int(entry.get("weight")),
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
