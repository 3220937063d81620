"""compose-model-deployment: whole-response tests, table-driven."""

from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner

from modelplane_cli.testing import as_dict, request, run, run_over_grpc

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


def replica(name: str, cluster_name: str, index: int, serving: bool = False) -> dict[str, Any]:
    """A ModelReplica as the scheduler composes it for `deployment(...)`."""
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
REQUIREMENTS = {
    "resources": {
        "inferenceclusters": {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster"},
        "modelreplicas": {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica"},
    }
}


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
) -> dict[str, Any]:
    desired: dict[str, Any] = {}
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
        "requirements": REQUIREMENTS,
        "context": {},
        "conditions": conditions,
    }
    if results:
        want["results"] = results
    return want


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
    },
    conditions=[
        SCHEDULED_3,
        condition("ReplicasReady", True, "AllReplicasReady", "3 of 3 replicas serving"),
        ALL_ACCEPTED,
    ],
)


def as_running(obj: dict[str, Any], uid: str = KIMI_UID) -> dict[str, Any]:
    """A composed replica as the API server holds it: in the deployment's namespace,
    with Crossplane's composition-resource-name annotation and controller reference."""
    running = observed_in_namespace(obj)
    running["metadata"]["annotations"] = {
        "crossplane.io/composition-resource-name": obj["metadata"]["name"]
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

CASES = [
    pytest.param(
        request(deployment(3)),
        response(
            conditions=[
                condition("ReplicasScheduled", None, "WaitingForFleet", "waiting for the fleet")
            ]
        ),
        id="fleet not fetched yet: nothing decided",
    ),
    pytest.param(
        request(deployment(3), required={"inferenceclusters": FLEET, "modelreplicas": []}),
        response(
            resources={
                A0: composed(replica(A0, "a", 0), ready=False),
                A1: composed(replica(A1, "a", 1), ready=False),
                B0: composed(replica(B0, "b", 0), ready=False),
            },
            status={
                "replicas": {"total": 3, "ready": 0},
                "placements": [placement(A0, "a", 0), placement(A1, "a", 1), placement(B0, "b", 0)],
                "matchTrace": [],
            },
            conditions=[
                SCHEDULED_3,
                condition("ReplicasReady", False, "ReplicasNotReady", "0 of 3 replicas serving"),
                ALL_ACCEPTED,
            ],
            results=[
                event("NORMAL", "ReplicaPlaced", f"Placed replica {A0} on cluster a (pool h100)"),
                event("NORMAL", "ReplicaPlaced", f"Placed replica {A1} on cluster a (pool h100)"),
                event("NORMAL", "ReplicaPlaced", f"Placed replica {B0} on cluster b (pool h100)"),
            ],
        ),
        id="spread across clusters, packing a only where b is full",
    ),
    pytest.param(
        request(
            deployment(3),
            required={"inferenceclusters": FLEET, "modelreplicas": []},
            observed={
                A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
                A1: observed_in_namespace(replica(A1, "a", 1, serving=True)),
                B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
            },
        ),
        STEADY_STATE,
        id="steady state: retained, serving, no events",
    ),
    pytest.param(
        request(
            deployment(3),
            required={"inferenceclusters": FLEET, "modelreplicas": list(RELABELLED.values())},
            observed=RELABELLED,
        ),
        # Each replica keeps its (cluster, index) and its name; the labels come back.
        STEADY_STATE,
        id="labels edited by hand move nothing: identity is Crossplane's and the spec's",
    ),
    pytest.param(
        request(deployment(0), required={"inferenceclusters": FLEET, "modelreplicas": []}),
        response(
            status={"replicas": {"total": 0, "ready": 0}, "placements": [], "matchTrace": []},
            conditions=[
                condition(
                    "ReplicasScheduled", True, "AllReplicasScheduled", "no replicas requested"
                ),
                condition("ReplicasReady", True, "AllReplicasReady", "0 of 0 replicas serving"),
                ALL_ACCEPTED,
            ],
        ),
        id="replicas 0 is valid",
    ),
]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_compose(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


def test_bad_selector_keeps_running_replicas() -> None:
    """A selector that does not compile holds every replica exactly as it runs."""
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    req = request(
        deployment(2, selector="device.attributes[ == 1"),
        required={"inferenceclusters": FLEET, "modelreplicas": list(running.values())},
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == [A0, B0]
    for name, obj in running.items():
        kept = got["desired"]["resources"][name]["resource"]
        assert kept["spec"] == obj["spec"]
        assert kept["metadata"]["name"] == name
    scheduled = got["conditions"][0]
    assert scheduled["type"] == "ReplicasScheduled"
    assert scheduled["status"] == "STATUS_CONDITION_FALSE"
    assert scheduled["reason"] == "InvalidNodeSelector"
    assert "spec.nodeSelector.devices[0].selectors[0].cel" in scheduled["message"]
    warnings = [r for r in got["results"] if r["severity"] == "SEVERITY_WARNING"]
    assert [w["reason"] for w in warnings] == ["InvalidNodeSelector"]


def test_nothing_fits_is_not_ready() -> None:
    """With replicas wanted and none placed, the deployment must not look Available."""
    req = request(
        deployment(1, pipeline=8), required={"inferenceclusters": FLEET, "modelreplicas": []}
    )
    got = as_dict(run(FunctionRunner(), req))
    assert got["desired"]["composite"]["ready"] == "READY_FALSE"
    assert "resources" not in got["desired"]
    assert got["conditions"][0]["reason"] == "InsufficientCapacity"
    trace = got["desired"]["composite"]["resource"]["status"]["matchTrace"]
    # Both clusters are too small for 8 pipeline stages: each is rejected as a
    # whole and through its one pool; a unified deployment's entries carry no role.
    assert [(e["cluster"], e.get("pool"), e["reason"]) for e in trace] == [
        ("a", None, "InsufficientCapacity"),
        ("a", "h100", "InsufficientCapacity"),
        ("b", None, "InsufficientCapacity"),
        ("b", "h100", "InsufficientCapacity"),
    ]
    assert all("role" not in e and e["message"] for e in trace)


def test_other_deployments_use_capacity() -> None:
    """Cluster b's two nodes are taken by another team's replica, so all three land on a..."""
    other = observed_in_namespace(replica("other-0", "b", 0))
    other["metadata"]["namespace"] = "team-b"
    other["metadata"]["labels"]["modelplane.ai/deployment"] = "other"
    other["spec"]["deploymentName"] = "other"
    req = request(deployment(3), required={"inferenceclusters": FLEET, "modelreplicas": [other]})
    got = as_dict(run(FunctionRunner(), req))
    clusters = [
        p["cluster"] for p in got["desired"]["composite"]["resource"]["status"]["placements"]
    ]
    # ...but a holds only two (4 nodes, 2 per replica): the third does not fit anywhere.
    assert clusters == ["a", "a"]
    assert got["conditions"][0]["reason"] == "InsufficientCapacity"


@pytest.mark.parametrize(("req", "want"), CASES)
def test_same_response_over_grpc(req: Any, want: dict[str, Any]) -> None:
    """Served over a real gRPC channel on loopback, the function answers exactly as in-process."""
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def test_a_replica_refused_by_its_cluster_shows_on_the_deployment() -> None:
    refused = observed_in_namespace(replica(B0, "b", 0, serving=True))
    refused["status"]["conditions"].append(
        {
            "type": "Accepted",
            "status": "False",
            "reason": "InvalidSchedulingTemplate",
            "message": "spec.scheduling.queue: renders to an invalid label value",
        }
    )
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        A1: observed_in_namespace(replica(A1, "a", 1, serving=True)),
        B0: refused,
    }
    req = request(
        deployment(3), required={"inferenceclusters": FLEET, "modelreplicas": []}, observed=running
    )
    got = as_dict(run(FunctionRunner(), req))
    assert got["conditions"][2] == condition(
        "ReplicasAccepted",
        False,
        "ReplicasNotAccepted",
        f"{B0}: InvalidSchedulingTemplate: spec.scheduling.queue: renders to an invalid label value",
    )
    # Still serving what it ran before: the replica stays, and counts as ready.
    assert got["desired"]["composite"]["resource"]["status"]["replicas"] == {"total": 3, "ready": 3}


def test_a_cluster_that_has_not_published_its_pools_keeps_its_replicas() -> None:
    """A restored or re-created InferenceCluster has spec.nodePools but no status yet:
    its hardware is not gone, so the replica on it must not be dropped."""
    restored = {**cluster("b", 2)}
    del restored["status"]
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    req = request(
        deployment(2),
        required={"inferenceclusters": [cluster("a", 4), restored], "modelreplicas": []},
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == sorted([A0, B0])
    kept = got["desired"]["resources"][B0]["resource"]
    assert kept["spec"] == running[B0]["spec"]


def test_a_replica_labelled_as_this_deployments_is_not_adopted() -> None:
    """Labels do not make a replica this deployment's: another deployment's replica
    relabelled `kimi` is charged to capacity, never composed or counted here."""
    other = as_running(replica("other-0", "b", 0), uid="uid-of-other")
    other["metadata"]["ownerReferences"][0]["name"] = "other"
    other["spec"]["deploymentName"] = "other"
    req = request(deployment(3), required={"inferenceclusters": FLEET, "modelreplicas": [other]})
    got = as_dict(run(FunctionRunner(), req))
    assert "other-0" not in got["desired"]["resources"]
    placements_ = got["desired"]["composite"]["resource"]["status"]["placements"]
    # Cluster b's two nodes are taken by the other replica: two land on a, none on b.
    assert [(p["cluster"], p["index"]) for p in placements_] == [("a", 0), ("a", 1)]


def test_a_namesakes_leftover_replica_is_not_retained() -> None:
    """A replica an earlier deployment of the same name composed (another uid) is not
    this one's: it is charged while it lingers, and this deployment places its own."""
    leftover = as_running(replica("kimi-old", "b", 0), uid="uid-of-the-deleted-kimi")
    req = request(deployment(1), required={"inferenceclusters": FLEET, "modelreplicas": [leftover]})
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == [A0]


def test_an_unreadable_cluster_keeps_its_replica_and_says_so() -> None:
    """A garbage InferenceCluster is not a deleted one: the replica on it is held."""
    garbage_b = cluster("b", 2)
    garbage_b["status"]["gpuPools"][0]["nodes"] = "two"
    running = {
        A0: as_running(replica(A0, "a", 0, serving=True)),
        B0: as_running(replica(B0, "b", 0, serving=True)),
    }
    req = request(
        deployment(2),
        required={
            "inferenceclusters": [cluster("a", 4), garbage_b],
            "modelreplicas": list(running.values()),
        },
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == [A0, B0]
    assert got["desired"]["resources"][B0]["resource"]["spec"] == running[B0]["spec"]
    assert got["conditions"][0]["reason"] == "AllReplicasScheduled"
    trace = got["desired"]["composite"]["resource"]["status"]["matchTrace"]
    assert trace == [
        {
            "cluster": "b",
            "reason": "ClusterUnreadable",
            "message": "cannot be read (status.gpuPools[0].nodes: Input should be a valid "
            "integer, unable to parse string as an integer): its replicas are kept as "
            "recorded, nothing new is placed",
        }
    ]
    warnings = [r for r in got["results"] if r["severity"] == "SEVERITY_WARNING"]
    assert [w["reason"] for w in warnings] == ["ClusterUnreadable"]
    assert warnings[0]["message"].startswith("InferenceCluster b cannot be read")


def test_an_unreadable_own_replica_keeps_everything() -> None:
    """A composed replica that cannot be read stops the decision, not the replicas."""
    broken = as_running(replica(B0, "b", 0, serving=True))
    broken["spec"]["index"] = "zero"
    running = {A0: as_running(replica(A0, "a", 0, serving=True)), B0: broken}
    req = request(
        deployment(1),
        required={"inferenceclusters": FLEET, "modelreplicas": list(running.values())},
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == [A0, B0]
    (scheduled,) = got["conditions"]
    assert scheduled["type"] == "ReplicasScheduled"
    assert scheduled["status"] == "STATUS_CONDITION_FALSE"
    assert scheduled["message"].startswith(f"modelreplicas[{B0}].spec.index: ")
    # Asked for on every call, so Crossplane's fetch loop settles.
    assert got["requirements"] == REQUIREMENTS
