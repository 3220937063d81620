"""The objects and expected responses the compose-model-deployment tests share."""

from typing import Any

from modelplane_models import ModelDeployment

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.scheduling.adapt.deployment import revision, spec_digest

from .asked import REQUIREMENTS, narrow_requirements

HOPPER = 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'
GPU: dict[str, Any] = {
    "name": "gpu",
    "claim": "DRA",
    "driver": "gpu.nvidia.com",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
    "attributes": {"architecture": {"string": "Hopper"}},
    "capacity": {"memory": {"value": "81559Mi"}},
}
# What the scheduler records of HOPPER on a pool of GPU nodes: the kind it holds on,
# and the digest of that hardware (core.devices.hardware_digest).
RESOLVED: dict[str, Any] = {"hardware": "179e351c9595c8fc", "devices": ["gpu"]}
KIMI_UID = "5e0b2a4c-6f0e-4c7e-9d11-2f3a1b0c9d8e"
TEMPLATE = {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.7.3"}]}}


def cluster(name: str, nodes: int, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"tier": "production", **labels}},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": f"{name}-kubeconfig", "namespace": "platform"}},
            },
            "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": nodes}],
        },
        "status": {
            "gpuPools": [{"name": "h100", "className": "h100-8x", "nodes": nodes, "devices": [GPU]}]
        },
    }


def deployment(replicas: int, selector: str = HOPPER, pipeline: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "kimi", "namespace": "ml", "uid": KIMI_UID},
        "spec": {
            "replicas": replicas,
            "clusterSelector": {"matchLabels": {"tier": "production"}},
            "nodeSelector": {
                "devices": [{"name": "gpu", "count": 8, "selectors": [{"cel": selector}]}]
            },
            "workers": {
                "count": 1,
                "topology": {"tensor": 8, "pipeline": pipeline},
                "template": TEMPLATE,
            },
        },
    }


def revision_of(obj: dict[str, Any]) -> str:
    """The revision a ModelDeployment's replicas record (a digest of what they render)."""
    return revision(parse_object(ModelDeployment, obj))


REVISION = revision_of(deployment(1))


def spec_of(obj: dict[str, Any]) -> str:
    """The digest of a ModelDeployment's spec that a decision over the fleet records
    (`status.matchTraceSpec`)."""
    return spec_digest(parse_object(ModelDeployment, obj))


def decided(obj: dict[str, Any]) -> dict[str, Any]:
    """The deployment as a decision over the fleet left it: its status records the
    spec that decision was for, so a reconcile with nothing changed may stay narrow.
    A spec that does not read was never decided: `obj` as it is."""
    try:
        spec = spec_of(obj)
    except InvalidInputError:
        return obj
    return {**obj, "status": {**obj.get("status", {}), "matchTraceSpec": spec}}


def replica(
    name: str, cluster_name: str, index: int, serving: bool = False, revision: str = REVISION
) -> dict[str, Any]:
    """A ModelReplica as the scheduler composes it for `deployment(...)`, recording
    `revision` (by default, the revision of `deployment(...)`)."""
    obj: dict[str, Any] = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": name,
            "labels": {
                "modelplane.ai/cluster": cluster_name,
                "modelplane.ai/deployment": "kimi",
                "modelplane.ai/replica-index": str(index),
            },
            # The backend of the clusters of `cluster(...)`, which it renders with.
            "annotations": {"modelplane.ai/revision": revision, "modelplane.ai/backend": "Native"},
        },
        "spec": {
            "clusterName": cluster_name,
            "deploymentName": "kimi",
            "index": index,
            "workers": {
                "count": 1,
                "deviceRequests": [
                    {
                        "count": 8,
                        "deviceClassName": "gpu.nvidia.com",
                        "name": "gpu",
                        "resolved": RESOLVED,
                        "selectors": [{"cel": HOPPER}],
                    }
                ],
                "nodePoolName": "h100",
                "template": TEMPLATE,
                "topology": {"data": 1, "dataLocal": 1, "pipeline": 2, "tensor": 8},
            },
        },
    }
    if serving:
        obj["status"] = {"conditions": [{"type": "Serving", "status": "True"}]}
    return obj


def observed_in_namespace(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as Crossplane observes it: in the deployment's namespace."""
    return {**obj, "metadata": {**obj["metadata"], "namespace": "ml"}}


A0, A1, B0 = "kimi-488f6e0d09", "kimi-870677d547", "kimi-7c7e7f03f4"


def traced_before(obj: dict[str, Any], trace: list[dict[str, Any]]) -> dict[str, Any]:
    """The deployment with the match trace the last decision over the fleet published."""
    return decided({**obj, "status": {"matchTrace": trace}})


def condition(type_: str, status: bool | None, reason: str, message: str) -> dict[str, Any]:
    names = {True: "TRUE", False: "FALSE", None: "UNKNOWN"}
    return {
        "type": type_,
        "status": f"STATUS_CONDITION_{names[status]}",
        "reason": reason,
        "message": message,
        "target": "TARGET_COMPOSITE",
    }


def event(severity: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "severity": f"SEVERITY_{severity}",
        "reason": reason,
        "message": message,
        "target": "TARGET_COMPOSITE",
    }


def placement(name: str, cluster_name: str, index: int, serving: bool = False) -> dict[str, Any]:
    return {
        "replica": name,
        "cluster": cluster_name,
        "index": index,
        "pools": {"workers": "h100"},
        "serving": serving,
    }


def composed(obj: dict[str, Any], ready: bool) -> dict[str, Any]:
    body = {k: v for k, v in obj.items() if k != "status"}
    return {"resource": body, "ready": "READY_TRUE" if ready else "READY_FALSE"}


def response(
    *,
    resources: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    conditions: list[dict[str, Any]],
    results: list[dict[str, Any]] | None = None,
    composite_ready: str | None = None,
    wanted: int | None = None,
    revision: str = REVISION,
    asked: dict[str, Any] = REQUIREMENTS,
    of: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole response (`asked`: its requirements). With a status, it also carries the rollout's fields: the
    selector, updatedReplicas (every placed replica, unless the status says) and, after
    the given conditions, Progressing as a deployment at rest reports it (complete once
    every wanted replica is placed and serves, else waiting for those that do not, or
    stalled on those not placed). The status records the spec of `of`, the deployment
    asked about (by default `deployment(3)`)."""
    desired: dict[str, Any] = {}
    if status is not None:
        total = status["replicas"]["total"]
        status = {
            "updatedReplicas": total,
            "selector": "modelplane.ai/deployment=kimi",
            "matchTraceSpec": spec_of(deployment(3) if of is None else of),
            **status,
        }
        updated = status["updatedReplicas"]
        waiting = sorted(p["replica"] for p in status["placements"] if not p["serving"])
        target = total if wanted is None else wanted
        head = f"{updated} of {target} replicas run revision {revision}"
        unplaced = target - updated
        short = (
            f"{unplaced} replica{'' if unplaced == 1 else 's'} not placed (see ReplicasScheduled)"
        )
        if waiting:
            notes = [f"waiting for {', '.join(waiting)} to serve"]
            notes += [short] if unplaced > 0 else []
            progress = condition("Progressing", True, "RollingUpdate", "; ".join([head, *notes]))
        elif unplaced > 0:
            progress = condition("Progressing", False, "RolloutStalled", f"{head}; {short}")
        else:
            progress = condition("Progressing", True, "RolloutComplete", head)
        conditions = [*conditions, progress]
    if status is not None or composite_ready:
        desired["composite"] = {}
        if status is not None:
            desired["composite"]["resource"] = {"status": status}
        if composite_ready:
            desired["composite"]["ready"] = composite_ready
    if resources:
        desired["resources"] = resources
    want: dict[str, Any] = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": desired,
        "requirements": asked,
        "context": {},
        "conditions": conditions,
    }
    if results:
        want["results"] = results
    return want


def asking(asked: dict[str, Any]) -> dict[str, Any]:
    """The whole answer to a call lacking a key it asks for: never kept by Crossplane's
    fetch loop, so its requirements and context only (design/required-resources.md)."""
    return {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {},
        "requirements": asked,
        "context": {},
    }


FLEET = [cluster("a", 4), cluster("b", 2)]
ALL_ACCEPTED = condition(
    "ReplicasAccepted", True, "AllReplicasAccepted", "no replica was refused by its cluster"
)
SCHEDULED_3 = condition(
    "ReplicasScheduled", True, "AllReplicasScheduled", "3 of 3 replicas scheduled across 2 clusters"
)

STEADY_STATE = response(
    resources={
        A0: composed(replica(A0, "a", 0), ready=True),
        A1: composed(replica(A1, "a", 1), ready=True),
        B0: composed(replica(B0, "b", 0), ready=True),
    },
    status={
        "replicas": {"total": 3, "ready": 3},
        "placements": [
            placement(A0, "a", 0, serving=True),
            placement(A1, "a", 1, serving=True),
            placement(B0, "b", 0, serving=True),
        ],
        "matchTrace": [],
        "endpoints": [],
    },
    conditions=[
        SCHEDULED_3,
        condition("ReplicasReady", True, "AllReplicasReady", "3 of 3 replicas serving"),
        ALL_ACCEPTED,
    ],
    asked=narrow_requirements("a", "b"),
)


def as_running(obj: dict[str, Any], uid: str = KIMI_UID) -> dict[str, Any]:
    """A composed replica as the API server holds it: in the deployment's namespace,
    with Crossplane's composition-resource-name annotation and controller reference."""
    running = observed_in_namespace(obj)
    running["metadata"]["annotations"] = {
        **obj["metadata"].get("annotations", {}),
        "crossplane.io/composition-resource-name": obj["metadata"]["name"],
    }
    running["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelDeployment",
            "name": "kimi",
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return running


def relabelled(obj: dict[str, Any], **labels: str) -> dict[str, Any]:
    obj["metadata"]["labels"].update(labels)
    return obj


# Someone edits every identity label of the running replicas: the deployment label
# names another deployment, the cluster and index labels point elsewhere.
RELABELLED = {
    A0: relabelled(
        as_running(replica(A0, "a", 0, serving=True)), **{"modelplane.ai/deployment": "other"}
    ),
    A1: relabelled(as_running(replica(A1, "a", 1, serving=True)), **{"modelplane.ai/cluster": "b"}),
    B0: relabelled(
        as_running(replica(B0, "b", 0, serving=True)),
        **{"modelplane.ai/cluster": "a", "modelplane.ai/replica-index": "1"},
    ),
}


# A cluster's storage for model caches, and a deployment's ModelCache (`weights`, in ml)
# with its weights Ready on `ready_on`.
CACHE_STORAGE = {"modelCache": {"storageClassName": "efs-rwx"}}


def model_cache(ready_on: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "ml"},
        "spec": {"uri": "hf://org/model", "size": "200Gi"},
        "status": {"clusters": [{"name": c, "phase": "Ready"} for c in ready_on]},
    }
