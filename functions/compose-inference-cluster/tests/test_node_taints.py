"""compose-inference-cluster on the taints of the node pools Modelplane creates: each pool
carries its class's taints and the GPU taint unless the class declares that key, and
publishes exactly those, so the replicas placed there and the stack's DaemonSets on its
GPU nodes tolerate what the nodes carry."""

from copy import deepcopy

import pytest

from .provisioned import (
    EKS_PROVISIONING,
    GKE_PROVISIONING,
    Obj,
    cluster,
    inference_class,
    resources,
    respond,
    system_ready,
    with_status,
)

GPU_TAINT: Obj = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
DEDICATED: Obj = {"key": "dedicated", "value": "inference", "effect": "NoExecute"}
TEAM: Obj = {"key": "example.com/team", "effect": "PreferNoSchedule"}


def tainted(provisioning: Obj, taints: list[Obj] | None) -> Obj:
    klass = deepcopy(inference_class(provisioning))
    if taints is not None:
        klass["spec"]["nodeTaints"] = taints
    return klass


def pool_taints(source: str, rsp: Obj) -> list[Obj]:
    if source == "EKS":
        return resources(rsp)["eks-nodegroup-h100"]["spec"]["forProvider"]["taint"]
    return resources(rsp)["gke-nodepool-h100"]["spec"]["forProvider"]["nodeConfig"]["taint"]


def gpu_daemon_set_tolerations(source: str, klass: Obj) -> tuple[list[Obj], list[Obj]]:
    """The tolerations of Node Feature Discovery's worker and of the NVIDIA DRA driver's
    kubelet plugin, the DaemonSets a Managed stack runs on every GPU node (the driver is
    composed once Node Feature Discovery reports Ready)."""
    composite = cluster(source, {"nodeCount": 1})
    composite["spec"]["stack"] = {"mode": "Managed"}
    first = resources(respond(composite, klass, system_ready(source)))
    observed = {
        **system_ready(source),
        "release-node-feature-discovery": with_status(first["release-node-feature-discovery"], {}),
    }
    second = resources(respond(composite, klass, observed))
    nfd = second["release-node-feature-discovery"]["spec"]["forProvider"]["values"]
    dra = second["release-nvidia-dra-driver-gpu"]["spec"]["forProvider"]["values"]
    return nfd["worker"]["tolerations"], dra["kubeletPlugin"]["tolerations"]


# source, the class's nodeTaints -> the pool's cloud taints, its published nodeTaints,
# and the tolerations of the DaemonSets on its nodes.
CASES = [
    pytest.param(
        "GKE",
        [GPU_TAINT],
        [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
        [GPU_TAINT],
        [{**GPU_TAINT, "operator": "Exists"}],
        id="GKE: the GPU taint the class declares, with GKE's value",
    ),
    pytest.param(
        "GKE",
        None,
        [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
        [GPU_TAINT],
        [{**GPU_TAINT, "operator": "Exists"}],
        id="GKE: a class declaring no taint still gets the GPU taint, and tolerates it",
    ),
    pytest.param(
        "GKE",
        [TEAM, DEDICATED],
        [
            {"key": "dedicated", "value": "inference", "effect": "NO_EXECUTE"},
            {"key": "example.com/team", "value": "present", "effect": "PREFER_NO_SCHEDULE"},
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        ],
        [TEAM, DEDICATED, GPU_TAINT],
        [
            {"key": "dedicated", "operator": "Equal", "value": "inference", "effect": "NoExecute"},
            {"key": "example.com/team", "operator": "Exists", "effect": "PreferNoSchedule"},
            {**GPU_TAINT, "operator": "Exists"},
        ],
        id="GKE: the class's own taints, sorted, beside the GPU taint",
    ),
    pytest.param(
        "GKE",
        [{"key": "nvidia.com/gpu", "value": "h100", "effect": "NoExecute"}],
        [{"key": "nvidia.com/gpu", "value": "h100", "effect": "NO_EXECUTE"}],
        [{"key": "nvidia.com/gpu", "value": "h100", "effect": "NoExecute"}],
        [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "h100", "effect": "NoExecute"}],
        id="GKE: a class declaring the GPU key with its own value and effect takes its place",
    ),
    pytest.param(
        "EKS",
        None,
        [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
        [GPU_TAINT],
        [{**GPU_TAINT, "operator": "Exists"}],
        id="EKS: a class declaring no taint keeps EKS's GPU taint, and tolerates it",
    ),
    pytest.param(
        "EKS",
        [GPU_TAINT, DEDICATED],
        [
            {"key": "dedicated", "value": "inference", "effect": "NO_EXECUTE"},
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
        ],
        [GPU_TAINT, DEDICATED],
        [
            {"key": "dedicated", "operator": "Equal", "value": "inference", "effect": "NoExecute"},
            {**GPU_TAINT, "operator": "Exists"},
        ],
        id="EKS: the class's own taints beside the GPU taint it declares",
    ),
]


@pytest.mark.parametrize(
    ("source", "declared", "cloud", "published", "tolerations"),
    CASES,
)
def test_a_created_pool_carries_and_publishes_its_classs_taints_and_the_gpu_taint(
    source: str,
    declared: list[Obj] | None,
    cloud: list[Obj],
    published: list[Obj],
    tolerations: list[Obj],
) -> None:
    provisioning = EKS_PROVISIONING if source == "EKS" else GKE_PROVISIONING
    klass = tainted(provisioning, declared)
    rsp = respond(cluster(source, {"nodeCount": 1}), klass)
    assert pool_taints(source, rsp) == cloud
    (pool,) = rsp["desired"]["composite"]["resource"]["status"]["gpuPools"]
    # What the fleet scheduler gives the replicas it places here as tolerations.
    assert pool["nodeTaints"] == published
    assert gpu_daemon_set_tolerations(source, klass) == (tolerations, tolerations)


def test_the_order_a_class_lists_its_taints_in_changes_no_node_pool() -> None:
    one = respond(cluster("GKE", {"nodeCount": 1}), tainted(GKE_PROVISIONING, [TEAM, DEDICATED]))
    other = respond(cluster("GKE", {"nodeCount": 1}), tainted(GKE_PROVISIONING, [DEDICATED, TEAM]))
    assert [t["key"] for t in pool_taints("GKE", one)] == [
        "dedicated",
        "example.com/team",
        "nvidia.com/gpu",
    ]
    assert resources(one)["gke-nodepool-h100"] == resources(other)["gke-nodepool-h100"]


def test_only_a_cluster_modelplane_creates_publishes_the_gpu_taint_it_adds() -> None:
    # Modelplane taints no node of a cluster it does not create: an existing cluster's
    # pools publish what their class declares, nothing more.
    created = cluster("EKS", {"nodeCount": 1})
    existing = deepcopy(created)
    existing["spec"]["cluster"] = {
        "source": "Existing",
        "existing": {"secretRef": {"name": "kubeconfig", "namespace": "modelplane-system"}},
    }
    published: dict[str, list[Obj] | None] = {}
    for source, composite in (("EKS", created), ("Existing", existing)):
        rsp = respond(composite, tainted(EKS_PROVISIONING, [TEAM]))
        (pool,) = rsp["desired"]["composite"]["resource"]["status"]["gpuPools"]
        published[source] = pool.get("nodeTaints")
    assert published == {"EKS": [TEAM, GPU_TAINT], "Existing": [TEAM]}
