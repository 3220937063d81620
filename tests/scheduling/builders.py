"""Builders for the API objects the scheduler reads, and the glue's way of reading them.

Objects are built as plain dicts, valid against the XRDs, then read the way
compose-model-deployment reads them: into the generated models, then through
the one adapter (`modelplane.scheduling.adapt`).
"""

import dataclasses
from collections.abc import Sequence
from typing import Any

from modelplane_models import InferenceCluster, ModelDeployment, ModelReplica

from modelplane.cel import CostBudget
from modelplane.core import vocabulary
from modelplane.core.issues import parse_object
from modelplane.scheduling import (
    CacheView,
    Cluster,
    Decision,
    Deployment,
    ExistingReplica,
    Pool,
    Priorities,
    SelectorEngine,
    existing_replicas,
    read_cluster,
    read_deployment,
    read_fleet,
    schedule,
    unreachable_clusters,
)

from .fake_engine import FakeEngine

Obj = dict[str, Any]
TEMPLATE: Obj = {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai"}]}}
EXISTING: Obj = {"source": "Existing", "existing": {"secretRef": {"name": "kc", "namespace": "p"}}}


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
    taints: list[Obj] | None = None,
    reachable: bool | None = None,
    queues: list[Obj] | None = None,
    over_quota: list[str] | None = None,
    backend: str | None = None,
    preemption: str | None = None,
    kubernetes_version: str | None = None,
) -> Obj:
    """`taints` sets spec.taints; `reachable` the Reachable condition (None: not reported);
    `queues` status.capacity.queues; `over_quota` scheduling.overQuotaPriorities;
    `backend` spec.backend.type; `preemption` scheduling.preemption;
    `kubernetes_version` spec.kubernetesVersion (None: left to the XRD's default)."""
    scheduling: Obj = {}
    if default_priority is not None:
        scheduling["defaultPriority"] = default_priority
    if allowed is not None:
        scheduling["allowedPriorities"] = allowed
    if over_quota is not None:
        scheduling["overQuotaPriorities"] = over_quota
    if preemption is not None:
        scheduling["preemption"] = preemption
    obj: Obj = {
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"gpuPools": list(pools)},
    }
    if pools or scheduling:
        declared = pools or (h100(),)
        obj["spec"] = {
            "cluster": EXISTING,
            "nodePools": [
                {"name": p["name"], "className": p["className"], "nodeCount": p["nodes"]}
                for p in declared
            ],
        }
        if scheduling:
            obj["spec"]["scheduling"] = scheduling
        if taints is not None:
            obj["spec"]["taints"] = taints
        if backend is not None:
            obj["spec"]["backend"] = {"type": backend}
        if kubernetes_version is not None:
            spec: Obj = obj["spec"]
            spec["kubernetesVersion"] = kubernetes_version
    if queues is not None:
        obj["status"]["capacity"] = {"queues": queues}
    if reachable is not None:
        status = "True" if reachable else "False"
        obj["status"]["conditions"] = [{"type": "Reachable", "status": status}]
    return obj


def declaring(obj: Obj, *pool_names: str) -> Obj:
    """The cluster with exactly `pool_names` in spec.nodePools, whatever it publishes."""
    spec = {
        **obj.get("spec", {}),
        "cluster": EXISTING,
        "nodePools": [{"name": n, "className": "h100-8x", "nodeCount": 2} for n in pool_names],
    }
    return {**obj, "spec": spec}


def request(name: str = "gpu", count: int = 1, *selectors: str) -> Obj:
    return {"name": name, "count": count, "selectors": [{"cel": s} for s in selectors]}


HOPPER = request("gpu", 8, "arch == Hopper")


def role(*requests: Obj, workers: int = 1, topology: Obj | None = None) -> Obj:
    return {
        "nodeSelector": {"devices": list(requests) or [HOPPER]},
        "workers": {"count": workers, "topology": topology or {}, "template": TEMPLATE},
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
    tolerations: list[Obj] | None = None,
    spread: list[Obj] | None = None,
    model_uri: str | None = None,
    cache_ref: str | None = None,
) -> Obj:
    """`spread` sets spec.placement.spreadConstraints; `model_uri` spec.model.uri;
    `cache_ref` spec.model.cacheRef."""
    spec: Obj = {"replicas": replicas}
    if model_uri is not None:
        spec["model"] = {"uri": model_uri}
    if cache_ref is not None:
        spec["model"] = {**spec.get("model", {}), "cacheRef": {"name": cache_ref}}
    if spread is not None:
        spec["placement"] = {"spreadConstraints": spread}
    if tolerations is not None:
        spec["tolerations"] = tolerations
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
    priority: str | None = None,
    serving: bool = False,
    created: str | None = None,
) -> Obj:
    """A ModelReplica as `deployment_name` composed it; `roles` replaces the single
    `workers` role when given. Crossplane's marks (the composition-resource-name
    annotation, the controller reference) say whose it is; the labels are decoration.
    `serving` sets its Serving condition, `created` its creationTimestamp."""
    spec: Obj = {"deploymentName": deployment_name, "clusterName": cluster_name, "index": index}
    if priority is not None:
        spec["priority"] = priority
    if roles is not None:
        spec.update(roles)
    else:
        spec["workers"] = {
            "count": workers,
            "topology": topology or {},
            "nodePoolName": pool_name,
            "deviceRequests": list(claims) or [claim("gpu", 8, "arch == Hopper")],
            "template": TEMPLATE,
        }
    replica_name = name or f"{deployment_name}-{cluster_name}-{index}"
    obj: Obj = {
        "metadata": {
            "name": replica_name,
            "namespace": namespace,
            "labels": {
                vocabulary.LABEL_DEPLOYMENT: deployment_name,
                vocabulary.LABEL_CLUSTER: cluster_name,
                vocabulary.LABEL_REPLICA_INDEX: str(index),
            },
            "annotations": {vocabulary.ANNOTATION_COMPOSITION_RESOURCE_NAME: replica_name},
            "ownerReferences": [
                {
                    "apiVersion": vocabulary.API_VERSION,
                    "kind": vocabulary.MODEL_DEPLOYMENT,
                    "name": deployment_name,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }
    if created is not None:
        obj["metadata"]["creationTimestamp"] = created
    if serving:
        obj["status"] = {"conditions": [{"type": "Serving", "status": "True"}]}
    return obj


def recorded_role(pool_name: str, *claims: Obj, workers: int = 1) -> Obj:
    return {
        "count": workers,
        "topology": {},
        "nodePoolName": pool_name,
        "deviceRequests": list(claims) or [claim("gpu", 8, "arch == Hopper")],
        "template": TEMPLATE,
    }


def read_dep(obj: Obj) -> Deployment:
    """A ModelDeployment object as the glue reads it."""
    return read_deployment(parse_object(ModelDeployment, obj))


def read_clusters(objs: Sequence[Obj]) -> list[Cluster]:
    """InferenceCluster objects as the glue reads them, sharing equal hardware."""
    fleet = read_fleet(parse_object(InferenceCluster, obj) for obj in objs)
    assert not fleet.unreadable, fleet.unreadable
    return list(fleet.clusters)


def read_one_cluster(obj: Obj) -> Cluster:
    """One cluster, read alone: it shares nothing with any other."""
    return read_cluster(parse_object(InferenceCluster, obj))


def read_pool(obj: Obj) -> Pool:
    """A published pool, as the scheduler reads it from a cluster's status."""
    return read_one_cluster(cluster("c", obj)).pools[0]


def serving_keys(objs: Sequence[Obj]) -> set[tuple[str, str]]:
    """(namespace, name) of the replicas whose Serving condition is True."""
    return {
        (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        for obj in objs
        if {"type": "Serving", "status": "True"} in obj.get("status", {}).get("conditions", [])
    }


def read_replicas(dep: Deployment, objs: Sequence[Obj]) -> list[ExistingReplica]:
    """The fleet's ModelReplicas, each owned by whoever composed it. One of `dep`'s that
    records no revision runs the current one: these fleets are at rest unless a test
    says otherwise (with a `modelplane.ai/revision` annotation)."""
    models = [parse_object(ModelReplica, obj) for obj in objs]
    known = existing_replicas(dep, None, {}, models, serving_keys(objs))
    assert known.skipped == 0
    return [
        r if r.revision or r.owner != dep.name else dataclasses.replace(r, revision=dep.revision)
        for r in known.replicas
    ]


# The other names the tests give deployments exist too (a deployment naming a class that
# does not is held: PriorityNotFound), at the default value they weighed before.
_NAMED = ("high", "low", "prod", "dev", "silver")
PRIORITIES = Priorities(
    {"critical": 1000, "standard": 100, "batch": 10, **dict.fromkeys(_NAMED, 0)}
)


def run(
    dep: Obj,
    clusters: Sequence[Obj],
    replicas: Sequence[Obj] = (),
    engine: SelectorEngine | None = None,
    priorities: Priorities | None = PRIORITIES,
    budget: CostBudget | None = None,
    cache: CacheView | None = None,
) -> Decision:
    deployment_ = read_dep(dep)
    fleet = read_fleet(
        (parse_object(InferenceCluster, obj) for obj in clusters),
        unreachable=unreachable_clusters(clusters),
    )
    return schedule(
        deployment_,
        fleet.clusters,
        read_replicas(deployment_, replicas),
        unreadable=fleet.unreadable,
        engine=engine or FakeEngine(),
        priorities=priorities,
        budget=budget,
        cache=cache,
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
