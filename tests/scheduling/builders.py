"""Builders for the API objects the scheduler reads, as the glue hands them over (dicts)."""

from collections.abc import Sequence
from typing import Any

from modelplane.core import vocabulary
from modelplane.scheduling import (
    Decision,
    SelectorEngine,
    parse_clusters,
    parse_deployment,
    parse_replicas,
    schedule,
)

from .fake_engine import FakeEngine

Obj = dict[str, Any]


def gpu(
    count: int = 8,
    arch: str = "Hopper",
    memory: int = 80,
    *,
    name: str = "gpu",
    device_class: str = "gpu.nvidia.com",
) -> Obj:
    return {
        "name": name,
        "claim": "DRA",
        "driver": "gpu.nvidia.com",
        "deviceClassName": device_class,
        "count": count,
        "attributes": {"arch": {"string": arch}},
        "capacity": {"memory": {"value": str(memory)}},
    }


def nic(count: int = 8, link: str = "infiniband", *, name: str = "nic") -> Obj:
    return {
        "name": name,
        "claim": "Synthetic",
        "driver": "nic.nvidia.com",
        "count": count,
        "attributes": {"link": {"string": link}},
    }


def pool(name: str, nodes: int, *devices: Obj) -> Obj:
    return {"name": name, "className": f"{name}-class", "nodes": nodes, "devices": list(devices)}


def h100(nodes: int = 2, name: str = "h100") -> Obj:
    return pool(name, nodes, gpu(8, "Hopper", 80))


def l4(nodes: int = 4, name: str = "l4") -> Obj:
    return pool(name, nodes, gpu(1, "Ada", 24))


def cluster(
    name: str,
    *pools: Obj,
    labels: dict[str, str] | None = None,
    default_priority: str | None = None,
    allowed: list[str] | None = None,
) -> Obj:
    scheduling: Obj = {}
    if default_priority is not None:
        scheduling["defaultPriority"] = default_priority
    if allowed is not None:
        scheduling["allowedPriorities"] = allowed
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"scheduling": scheduling} if scheduling else {},
        "status": {"gpuPools": list(pools)},
    }


def request(name: str = "gpu", count: int = 1, *selectors: str) -> Obj:
    return {"name": name, "count": count, "selectors": [{"cel": s} for s in selectors]}


HOPPER = request("gpu", 8, "arch == Hopper")


def role(*requests: Obj, workers: int = 1, topology: Obj | None = None) -> Obj:
    return {
        "nodeSelector": {"devices": list(requests) or [HOPPER]},
        "workers": {"count": workers, "topology": topology or {}},
    }


def deployment(
    replicas: int = 1,
    *requests: Obj,
    name: str = "model",
    namespace: str = "ml",
    workers: int = 1,
    topology: Obj | None = None,
    cluster_selector: Obj | None = None,
    priority: str | None = None,
    decode: Obj | None = None,
    prefill: Obj | None = None,
) -> Obj:
    spec: Obj = {"replicas": replicas}
    if decode is not None or prefill is not None:
        spec["decode"] = decode
        spec["prefill"] = prefill
    else:
        spec.update(role(*requests, workers=workers, topology=topology))
    if cluster_selector is not None:
        spec["clusterSelector"] = cluster_selector
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


def claim(name: str = "gpu", count: int = 8, *selectors: str) -> Obj:
    return {
        "name": name,
        "deviceClassName": "gpu.nvidia.com",
        "count": count,
        "selectors": [{"cel": s} for s in selectors],
    }


def replica(
    cluster_name: str,
    index: int,
    pool_name: str = "h100",
    *claims: Obj,
    deployment_name: str = "model",
    namespace: str = "ml",
    name: str | None = None,
    workers: int = 1,
    topology: Obj | None = None,
    roles: dict[str, Obj] | None = None,
) -> Obj:
    """A ModelReplica; `roles` replaces the single `workers` role when given."""
    spec: Obj = {"deploymentName": deployment_name, "clusterName": cluster_name, "index": index}
    if roles is not None:
        spec.update(roles)
    else:
        spec["workers"] = {
            "count": workers,
            "topology": topology or {},
            "nodePoolName": pool_name,
            "deviceRequests": list(claims) or [claim("gpu", 8, "arch == Hopper")],
        }
    return {
        "metadata": {
            "name": name or f"{deployment_name}-{cluster_name}-{index}",
            "namespace": namespace,
            "labels": {
                vocabulary.LABEL_DEPLOYMENT: deployment_name,
                vocabulary.LABEL_CLUSTER: cluster_name,
                vocabulary.LABEL_REPLICA_INDEX: str(index),
            },
        },
        "spec": spec,
    }


def recorded_role(pool_name: str, *claims: Obj, workers: int = 1) -> Obj:
    return {
        "count": workers,
        "topology": {},
        "nodePoolName": pool_name,
        "deviceRequests": list(claims) or [claim("gpu", 8, "arch == Hopper")],
    }


def run(
    dep: Obj,
    clusters: Sequence[Obj],
    replicas: Sequence[Obj] = (),
    engine: SelectorEngine | None = None,
) -> Decision:
    return schedule(
        parse_deployment(dep),
        parse_clusters(clusters),
        parse_replicas(replicas),
        engine=engine or FakeEngine(),
    )


def placements(decision: Decision) -> list[str]:
    """`cluster/index:pool` per desired replica (roles joined by '+'), in output order."""
    return [
        f"{r.cluster}/{r.index}:" + "+".join(p.pool for p in r.roles) for r in decision.replicas
    ]


def new_placements(decision: Decision) -> list[str]:
    return [
        f"{r.cluster}/{r.index}:" + "+".join(p.pool for p in r.roles)
        for r in decision.replicas
        if r.new
    ]
