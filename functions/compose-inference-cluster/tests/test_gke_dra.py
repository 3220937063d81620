"""compose-inference-cluster on a GKE cluster Modelplane creates, for GPUs claimed through
DRA: the node pool GKE's DRA page asks for, the NVIDIA driver installer composed inside
the cluster (and kept, and ordered, like the cloud's other in-cluster resources), and
the DRA driver's values on GKE's nodes."""

from copy import deepcopy
from typing import Any

import pytest

from .provisioned import (
    EKS_PROVISIONING,
    GKE_PROVISIONING,
    GPU,
    NAME,
    Obj,
    cluster,
    inference_class,
    resources,
    respond,
    system_ready,
    with_status,
)

SYSTEM = "modelplane-system"
POOL_LABEL = {"modelplane.ai/pool": "h100"}
DRA_LABELS = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "nvidia.com/gpu.present": "true",
    "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
}
INSTALLER = "gke-nvidia-driver-installer"
INSTALLER_LATEST = "gke-nvidia-driver-installer-latest"


def installers_in(rsp: Obj) -> set[str]:
    return {k for k in resources(rsp) if k.startswith("gke-nvidia-driver-installer")}


def gke_class(devices: list[Obj], driver: str | None = None) -> Obj:
    klass = deepcopy(inference_class(GKE_PROVISIONING))
    klass["spec"]["devices"] = devices
    if driver is not None:
        klass["spec"]["provisioning"]["gke"]["gpuDriverVersion"] = driver
    return klass


NVIDIA = [{**GPU, "count": 8}]
SYNTHETIC = [{**GPU, "count": 8, "claim": "Synthetic"}]
OTHER_DRIVER = [{"name": "gpu", "driver": "gpu.example.com", "deviceClassName": "gpu.example.com"}]

# class devices and gpuDriverVersion -> what the node pool asks GKE to install, the
# extra nodeConfig fields, and the installers composed.
POOLS = [
    pytest.param(
        gke_class(NVIDIA),
        "INSTALLATION_DISABLED",
        {
            "imageType": "COS_CONTAINERD",
            "labels": {**POOL_LABEL, **DRA_LABELS, "modelplane.ai/nvidia-driver": "default"},
        },
        {INSTALLER},
        id="NVIDIA DRA GPUs, the default driver: Modelplane installs it",
    ),
    pytest.param(
        gke_class(NVIDIA, "LATEST"),
        "INSTALLATION_DISABLED",
        {
            "imageType": "COS_CONTAINERD",
            "labels": {**POOL_LABEL, **DRA_LABELS, "modelplane.ai/nvidia-driver": "latest"},
        },
        {INSTALLER_LATEST},
        id="NVIDIA DRA GPUs, the latest driver",
    ),
    pytest.param(
        gke_class(NVIDIA, "INSTALLATION_DISABLED"),
        "INSTALLATION_DISABLED",
        {"imageType": "COS_CONTAINERD", "labels": {**POOL_LABEL, **DRA_LABELS}},
        set[str](),
        id="NVIDIA DRA GPUs whose driver the platform installs",
    ),
    pytest.param(
        gke_class(SYNTHETIC, "LATEST"),
        "LATEST",
        {"labels": POOL_LABEL},
        set[str](),
        id="GPUs never claimed through DRA: GKE installs the driver",
    ),
    pytest.param(
        gke_class(OTHER_DRIVER),
        "DEFAULT",
        {"labels": POOL_LABEL},
        set[str](),
        id="another DRA driver's devices: GKE installs the driver",
    ),
]


@pytest.mark.parametrize(("klass", "installs", "node_config", "installers"), POOLS)
def test_a_pool_claimed_through_dra_is_set_up_as_gke_documents(
    klass: Obj, installs: str, node_config: Obj, installers: set[str]
) -> None:
    rsp = respond(cluster("GKE", {"nodeCount": 1}), klass)
    got = resources(rsp)["gke-nodepool-h100"]["spec"]["forProvider"]["nodeConfig"]
    assert got["guestAccelerator"] == [
        {
            "type": "nvidia-h100-80gb",
            "count": 8,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": installs},
        }
    ]
    assert {k: got[k] for k in ("imageType", "labels") if k in got} == node_config
    assert installers_in(rsp) == installers
    # The cloud's resources are a GPU pool's as before, plus each installer and the
    # Usage keeping the cluster for it.
    before = respond(cluster("GKE", {"nodeCount": 1}), gke_class(OTHER_DRIVER))
    usages = {f"usage-cloud-gke-cluster-by-{key}" for key in installers}
    assert cloud_keys(rsp) == cloud_keys(before) | installers | usages


def cloud_keys(rsp: Obj) -> set[str]:
    return {k for k in resources(rsp) if k.startswith(("gke-", "usage-cloud-"))}


def test_the_installer_runs_gkes_cos_installer_on_the_pools_gpu_nodes_only() -> None:
    rsp = respond(cluster("GKE", {"nodeCount": 1}), gke_class(NVIDIA, "LATEST"))
    wrapped = resources(rsp)[INSTALLER_LATEST]
    assert wrapped["apiVersion"] == "kubernetes.m.crossplane.io/v1alpha1"
    assert wrapped["metadata"] == {
        "name": f"{NAME}-nvidia-driver-installer-latest",
        "namespace": SYSTEM,
    }
    assert wrapped["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": NAME}
    daemon_set = wrapped["spec"]["forProvider"]["manifest"]
    assert (daemon_set["kind"], daemon_set["metadata"]["namespace"]) == ("DaemonSet", "kube-system")
    pod = daemon_set["spec"]["template"]["spec"]
    assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
                    {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
                    {"key": "modelplane.ai/nvidia-driver", "operator": "In", "values": ["latest"]},
                ]
            }
        ]
    }
    # A GKE GPU node is tainted nvidia.com/gpu=present:NoSchedule; a drained one keeps its driver.
    assert pod["tolerations"] == [{"operator": "Exists"}]
    (install,) = pod["initContainers"]
    assert install["image"] == "cos-nvidia-installer:fixed"
    assert "/cos-gpu-installer install --version=latest" in install["command"][-1]
    assert {"name": "driver", "hostPath": {"path": "/home/kubernetes/bin/nvidia"}} in pod["volumes"]


def test_the_installer_goes_before_the_cluster() -> None:
    rsp = respond(cluster("GKE", {"nodeCount": 1}), gke_class(NVIDIA))
    usage = resources(rsp)[f"usage-cloud-gke-cluster-by-{INSTALLER}"]
    assert usage["spec"] == {
        "of": {
            "apiVersion": "container.gcp.m.upbound.io/v1beta1",
            "kind": "Cluster",
            "resourceRef": {"name": NAME},
        },
        "by": {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "Object",
            "resourceRef": {"name": f"{NAME}-nvidia-driver-installer"},
        },
        "replayDeletion": True,
    }


def test_a_pool_whose_class_cannot_be_read_keeps_every_installer() -> None:
    """Its class (and so its driver) is unknown: no installer may go, or its new nodes
    would come up without a driver."""
    good = respond(cluster("GKE", {"nodeCount": 1}), gke_class(NVIDIA))
    observed = {
        key: with_status(resources(good)[key], {})
        for key in ("gke-nodepool-h100", INSTALLER, "gke-cluster")
    }
    rsp = respond(cluster("GKE", {"nodeCount": 1}), inference_class(None), observed)
    assert installers_in(rsp) == {INSTALLER, INSTALLER_LATEST}
    assert resources(rsp)[INSTALLER] == resources(good)[INSTALLER]
    assert (
        resources(rsp)["gke-nodepool-h100"]["spec"] == resources(good)["gke-nodepool-h100"]["spec"]
    )


def dra_driver_values(source: str, provisioning: Obj) -> dict[str, Any]:
    """The NVIDIA DRA driver Release's values on a created cluster with a Managed stack,
    once Node Feature Discovery (which it is installed after) reports Ready."""
    composite = cluster(source, {"nodeCount": 1})
    composite["spec"]["stack"] = {"mode": "Managed"}
    klass = inference_class(provisioning)
    first = respond(composite, klass, system_ready(source))
    nfd = deepcopy(resources(first)["release-node-feature-discovery"])
    observed = {**system_ready(source), "release-node-feature-discovery": with_status(nfd, {})}
    release = resources(respond(composite, klass, observed))["release-nvidia-dra-driver-gpu"]
    return release["spec"]["forProvider"]["values"]


def test_the_dra_driver_reads_the_driver_from_gkes_directory_on_gke_only() -> None:
    gke = dra_driver_values("GKE", GKE_PROVISIONING)
    eks = dra_driver_values("EKS", EKS_PROVISIONING)
    assert gke["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
    # GKE admits the system-node-critical class in kube-system only.
    assert gke["kubeletPlugin"]["priorityClassName"] == ""
    # Everything else is the same on both clouds; EKS's NVIDIA AMIs carry the driver
    # at the host's root, the chart's default.
    del gke["nvidiaDriverRoot"], gke["kubeletPlugin"]["priorityClassName"]
    assert {k: v for k, v in gke.items() if v} == eks
