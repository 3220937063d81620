"""compose-inference-cluster on clusters Modelplane creates: what it composes from each
pool's class, what the cloud reports back, and bad input that deletes nothing."""

from copy import deepcopy

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .provisioned import (
    EKS_PROVISIONING,
    GKE_PROVISIONING,
    NAME,
    Obj,
    cluster,
    condition,
    inference_class,
    resources,
    respond,
    with_status,
)


@pytest.mark.parametrize(
    ("source", "provisioning", "kind", "key"),
    [
        ("EKS", EKS_PROVISIONING, "NodeGroup", "eks-nodegroup-h100"),
        ("GKE", GKE_PROVISIONING, "NodePool", "gke-nodepool-h100"),
    ],
)
def test_each_pool_is_built_from_its_class(
    source: str, provisioning: Obj, kind: str, key: str
) -> None:
    rsp = respond(
        cluster(source, {"nodeCount": 1, "minNodes": 1, "maxNodes": 3}),
        inference_class(provisioning),
    )
    pool = resources(rsp)[key]
    assert pool["kind"] == kind
    assert pool["metadata"]["namespace"] == "modelplane-system"
    # The cloud-side name is `<cluster>-<pool>`; the resource's own name adds a digest.
    assert pool["metadata"]["annotations"] == {"crossplane.io/external-name": f"{NAME}-h100"}
    assert pool["metadata"]["name"].startswith(f"{NAME}-h100-")
    assert condition(rsp, "Provisioned")["reason"] == "Provisioning"
    status = rsp["desired"]["composite"]["resource"]["status"]
    # Placeable up to maxNodes; nothing ready until the cloud reports.
    assert status["gpuPools"][0]["nodes"] == 3
    assert status["capacity"]["pools"][0]["nodes"] == 0
    provider_config = resources(rsp)["provider-config"]
    assert provider_config["spec"]["credentials"]["secretRef"] == {
        "name": f"{NAME}-kubeconfig",
        "namespace": "modelplane-system",
        "key": "kubeconfig",
    }


def test_a_gke_pool_asks_gke_for_its_accelerators_and_driver() -> None:
    rsp = respond(
        cluster("GKE", {"nodeCount": 2, "minNodes": 1, "maxNodes": 4}),
        inference_class(
            {**GKE_PROVISIONING, "gke": {**GKE_PROVISIONING["gke"], "capacityType": "Spot"}}
        ),
    )
    spec = resources(rsp)["gke-nodepool-h100"]["spec"]
    node_config = spec["forProvider"]["nodeConfig"]
    assert node_config["guestAccelerator"] == [
        {
            "type": "nvidia-h100-80gb",
            "count": 8,
            # Its GPUs are claimed through DRA, which GKE's own driver installation
            # does not support (test_gke_dra).
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"},
        }
    ]
    assert node_config["spot"] is True
    assert node_config["labels"]["modelplane.ai/pool"] == "h100"
    assert spec["forProvider"]["autoscaling"] == {
        "totalMinNodeCount": 1,
        "totalMaxNodeCount": 4,
        "locationPolicy": "ANY",
    }
    # A zonal cluster: the whole initial size in its one zone, set once.
    assert spec["initProvider"] == {"initialNodeCount": 2}


@pytest.mark.parametrize(
    ("source", "provisioning", "key", "at_provider", "ready"),
    [
        pytest.param(
            "EKS",
            EKS_PROVISIONING,
            "eks-nodegroup-h100",
            {"status": "ACTIVE", "scalingConfig": {"desiredSize": 2}},
            2,
            id="an active EKS node group",
        ),
        pytest.param(
            "EKS",
            EKS_PROVISIONING,
            "eks-nodegroup-h100",
            {"status": "CREATING", "scalingConfig": {"desiredSize": 2}},
            0,
            id="an EKS node group being created",
        ),
        pytest.param(
            "GKE",
            GKE_PROVISIONING,
            "gke-nodepool-h100",
            {"nodeCount": 1, "managedInstanceGroupUrls": ["a", "b"]},
            2,
            id="a GKE node pool over two zones",
        ),
    ],
)
def test_capacity_is_what_the_cloud_reports_ready(
    source: str, provisioning: Obj, key: str, at_provider: Obj, ready: int
) -> None:
    composite = cluster(source, {"nodeCount": 2, "minNodes": 1, "maxNodes": 4})
    first = respond(composite, inference_class(provisioning))
    observed = {key: with_status(resources(first)[key], at_provider)}
    rsp = respond(composite, inference_class(provisioning), observed)
    (pool,) = rsp["desired"]["composite"]["resource"]["status"]["capacity"]["pools"]
    assert (pool["nodes"], pool["maxNodes"]) == (ready, 4)


# A qualified name Kubernetes takes as a taint key, 64 characters long.
LONG_TAINT_KEY = "inference.platform-teams.example.com/dedicated-for-model-serving"
BOTTLEROCKET: Obj = {
    **EKS_PROVISIONING,
    "eks": {**EKS_PROVISIONING["eks"], "amiType": "BOTTLEROCKET_x86_64_NVIDIA"},
}
BAD = [
    pytest.param(
        {"nodeCount": 1},
        inference_class(BOTTLEROCKET),
        "spec.nodePools[0].className: InferenceClass 'h100' claims NVIDIA GPUs through DRA "
        "on spec.provisioning.eks.amiType 'BOTTLEROCKET_x86_64_NVIDIA'",
        id="a Bottlerocket NVIDIA AMI, whose device plugin the DRA driver cannot run beside",
    ),
    pytest.param(
        {"nodeCount": 1},
        inference_class(None),
        "spec.nodePools[0].className: InferenceClass 'h100' has no spec.provisioning",
        id="a class without provisioning",
    ),
    pytest.param(
        {"nodeCount": 1},
        inference_class(GKE_PROVISIONING),
        "spec.nodePools[0].className: InferenceClass 'h100' has no spec.provisioning.eks",
        id="a class for another cloud",
    ),
    pytest.param(
        {"nodeCount": 1, "minNodes": 3, "maxNodes": 2},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].maxNodes: must be at least minNodes (3), not 2",
        id="maxNodes below minNodes",
    ),
    pytest.param(
        {"nodeCount": 5, "minNodes": 0, "maxNodes": 2},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].nodeCount: must be between minNodes and maxNodes (0..2), not 5",
        id="nodeCount outside the range",
    ),
    pytest.param(
        {"nodeCount": 0, "minNodes": 0, "maxNodes": 0},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].maxNodes: must be at least 1",
        id="an EKS group that may never have a node",
    ),
    pytest.param(
        {"nodeCount": 1, "minNodes": 0, "maxNodes": 3},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].minNodes: must be at least 1: InferenceClass 'h100' claims "
        "devices through DRA",
        id="an autoscaled EKS group of DRA devices that may shrink to zero",
    ),
    pytest.param(
        {"nodeCount": 1},
        {
            **inference_class(EKS_PROVISIONING),
            "spec": {
                **inference_class(EKS_PROVISIONING)["spec"],
                "nodeTaints": [{"key": LONG_TAINT_KEY, "effect": "NoSchedule"}],
            },
        },
        f"spec.nodePools[0].className: InferenceClass 'h100' declares the node taint "
        f"'{LONG_TAINT_KEY}'; an EKS node group's taint keys are at most 63 characters",
        id="a class taint key longer than EKS takes",
    ),
]


@pytest.mark.parametrize(
    ("source", "provisioning", "claim"),
    [("EKS", EKS_PROVISIONING, "Synthetic"), ("GKE", GKE_PROVISIONING, "DRA")],
)
def test_a_pool_scales_from_zero_where_its_autoscaler_can_grow_it(
    source: str, provisioning: Obj, claim: str
) -> None:
    # EKS's autoscaler grows from zero what claims nothing through DRA; GKE's grows DRA pools.
    klass = inference_class(provisioning)
    klass["spec"]["devices"][0]["claim"] = claim
    rsp = respond(cluster(source, {"nodeCount": 0, "minNodes": 0, "maxNodes": 3}), klass)
    assert condition(rsp, "Provisioned")["reason"] == "Provisioning"


@pytest.mark.parametrize(("pool", "klass", "message"), BAD)
def test_bad_input_names_the_field_and_keeps_the_node_group(
    pool: Obj, klass: Obj, message: str
) -> None:
    good = respond(cluster("EKS", {"nodeCount": 1}), inference_class(EKS_PROVISIONING))
    running = with_status(
        resources(good)["eks-nodegroup-h100"],
        {"status": "ACTIVE", "scalingConfig": {"desiredSize": 1}},
    )
    rsp = respond(cluster("EKS", pool), klass, {"eks-nodegroup-h100": running})
    provisioned = condition(rsp, "Provisioned")
    assert (provisioned["status"], provisioned["reason"]) == (
        "STATUS_CONDITION_FALSE",
        "InvalidProvisioning",
    )
    assert message in provisioned["message"]
    assert any(message in r.get("message", "") for r in rsp.get("results", []))
    kept = resources(rsp)["eks-nodegroup-h100"]
    assert kept["spec"] == resources(good)["eks-nodegroup-h100"]["spec"]
    # The rest of the cluster is composed as before.
    assert set(resources(good)) <= set(resources(rsp))
    # Its node group still runs its node: the pool's capacity says so.
    pools = rsp["desired"]["composite"]["resource"]["status"]["capacity"]["pools"]
    assert [p["nodes"] for p in pools if p["name"] == "h100"] == [1]


def test_a_replica_placed_here_keeps_the_cluster_and_its_kubeconfig() -> None:
    replica = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": "chat-0",
            "namespace": "team-a",
            "labels": {"modelplane.ai/cluster": NAME},
        },
        "spec": {
            "clusterName": NAME,
            "deploymentName": "chat",
            "index": 0,
            "workers": {
                "nodePoolName": "h100",
                "template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}},
            },
        },
    }
    composite = cluster("EKS", {"nodeCount": 1})
    req = request(
        composite,
        required={
            "inferenceclass-h100": [inference_class(EKS_PROVISIONING)],
            "modelreplicas": [replica],
            "replica-objects": [],
        },
    )
    rsp = as_dict(run(FunctionRunner(), req))
    usages = [r for k, r in resources(rsp).items() if k.startswith("usage-cloud-replica-")]
    protected = sorted(
        (u["spec"]["of"]["kind"], u["spec"]["of"]["resourceRef"]["name"]) for u in usages
    )
    assert protected == [("Cluster", NAME), ("ClusterAuth", NAME)]
    for usage in usages:
        assert usage["metadata"]["namespace"] == "team-a"
        assert usage["spec"]["by"] == {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelReplica",
            "resourceRef": {"name": "chat-0"},
        }
        assert usage["spec"]["replayDeletion"] is True


def test_the_autoscaler_starts_only_once_its_pod_identity_exists() -> None:
    composite = cluster("EKS", {"nodeCount": 1, "minNodes": 1, "maxNodes": 3})
    klass = inference_class(EKS_PROVISIONING)
    first = resources(respond(composite, klass))
    # Pod Identity sets a pod's credentials when it is admitted, so the release waits,
    # and so does every Usage naming it.
    assert "eks-autoscaler-pod-identity" in first
    assert not [k for k in first if "autoscaler-release" in k]
    association = with_status(first["eks-autoscaler-pod-identity"], {})
    system = with_status(first["eks-nodegroup-system"], {"status": "ACTIVE"})
    both = {"eks-autoscaler-pod-identity": association, "eks-nodegroup-system": system}
    ready = resources(respond(composite, klass, both))
    release = ready["eks-autoscaler-release"]
    assert [k for k in ready if k.startswith("usage-cloud-") and "autoscaler-release" in k]
    # Once composed, it stays, whatever the association reports later.
    lost = deepcopy(association)
    lost["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "Creating"}]
    observed = {"eks-autoscaler-pod-identity": lost, "eks-autoscaler-release": release}
    assert resources(respond(composite, klass, observed))["eks-autoscaler-release"] == release


@pytest.mark.parametrize(
    ("source", "provisioning", "key"),
    [
        ("EKS", EKS_PROVISIONING, "eks-nodegroup-system"),
        ("GKE", GKE_PROVISIONING, "gke-nodepool-system"),
    ],
)
def test_a_pool_may_not_take_the_system_groups_name(
    source: str, provisioning: Obj, key: str
) -> None:
    composite = cluster(source, {"nodeCount": 1})
    klass = inference_class(provisioning)
    system = resources(respond(composite, klass))[key]
    composite["spec"]["nodePools"][0]["name"] = "system"
    rsp = respond(composite, klass)
    provisioned = condition(rsp, "Provisioned")
    assert provisioned["status"] == "STATUS_CONDITION_FALSE"
    assert "spec.nodePools[0].name: 'system' is reserved" in provisioned["message"]
    assert any("spec.nodePools[0].name" in r.get("message", "") for r in rsp["results"])
    assert resources(rsp)[key] == system
    # What exists under the key is kept as it is, not changed in place.
    running = with_status(
        system, {"status": "ACTIVE", "scalingConfig": {"desiredSize": 2}, "nodeCount": 2}
    )
    running["spec"]["forProvider"]["version"] = "1.33"
    got = respond(composite, klass, {key: running})
    kept = resources(got)[key]
    assert kept["spec"] == running["spec"]
    # The system group's nodes are not the refused pool's capacity.
    pools = got["desired"]["composite"]["resource"]["status"]["capacity"]["pools"]
    assert [p["nodes"] for p in pools if p["name"] == "system"] in ([], [0])
