"""A GKE cluster Modelplane creates, for GPUs claimed through DRA (examples/clusters/gke):
its GPU node pools are set up as GKE's DRA page asks, the NVIDIA driver is installed
on exactly their nodes, and the Managed stack's DRA driver reads it from GKE's
directory; an EKS cluster's stack is left as it was."""

from typing import Any

import pytest

from .fleets import Fleet, Renderer, find

Obj = dict[str, Any]
DRIVER_LABEL = "modelplane.ai/nvidia-driver"


@pytest.fixture(scope="module")
def gke(renderer: Renderer) -> Fleet:
    fleet = renderer.paths("clusters/gke")
    assert fleet.result.ok, fleet.result.errors
    return fleet


def gpu_pools(fleet: Fleet) -> list[Obj]:
    return [
        p
        for p in fleet.all("NodePool")
        if p["spec"]["forProvider"]["nodeConfig"].get("guestAccelerator")
    ]


def installers(fleet: Fleet) -> dict[str, Obj]:
    """The driver installers' Objects, by the driver their DaemonSet's nodes are labelled
    with."""
    out: dict[str, Obj] = {}
    for obj in fleet.all("Object"):
        manifest = obj["spec"]["forProvider"]["manifest"]
        if manifest["kind"] != "DaemonSet":
            continue
        (term,) = manifest["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        (driver,) = [e["values"] for e in term["matchExpressions"] if e["key"] == DRIVER_LABEL]
        out[driver[0]] = obj
    return out


def test_each_gpu_pool_leaves_its_driver_and_device_plugin_to_dra(gke: Fleet) -> None:
    pools = gpu_pools(gke)
    assert len(pools) == 2
    for pool in pools:
        config = pool["spec"]["forProvider"]["nodeConfig"]
        (accelerator,) = config["guestAccelerator"]
        assert accelerator["gpuDriverInstallationConfig"] == {
            "gpuDriverVersion": "INSTALLATION_DISABLED"
        }
        assert config["imageType"] == "COS_CONTAINERD"
        labels = config["labels"]
        assert labels["gke-no-default-nvidia-gpu-device-plugin"] == "true"
        assert labels["nvidia.com/gpu.present"] == "true"
        assert labels["cloud.google.com/gke-nvidia-gpu-dra-driver"] == "true"


def test_every_gpu_pool_gets_the_driver_its_class_names_from_one_installer(gke: Fleet) -> None:
    """The example's H100 class asks for the LATEST driver, its L4 class for the default:
    one installer each, each selecting the nodes labelled for it."""
    by_driver = installers(gke)
    wanted = {
        p["spec"]["forProvider"]["nodeConfig"]["labels"][DRIVER_LABEL] for p in gpu_pools(gke)
    }
    assert wanted == set(by_driver) == {"default", "latest"}
    for driver, obj in by_driver.items():
        daemon_set = obj["spec"]["forProvider"]["manifest"]
        assert daemon_set["metadata"]["namespace"] == "kube-system"
        assert daemon_set["spec"]["template"]["spec"]["tolerations"] == [{"operator": "Exists"}]
        (install,) = daemon_set["spec"]["template"]["spec"]["initContainers"]
        assert ("--version=latest" in install["command"][-1]) == (driver == "latest")
        assert obj["status"]["conditions"][0] == {
            "type": "Ready",
            "status": "True",
            "reason": "Available",
        }


def test_the_installers_keep_the_cluster_until_they_are_gone(gke: Fleet) -> None:
    usages = {
        (u["spec"]["of"]["kind"], u["spec"]["by"]["kind"], u["spec"]["by"]["resourceRef"]["name"])
        for u in gke.all("Usage")
    }
    names = [obj["metadata"]["name"] for obj in installers(gke).values()]
    assert len(names) == 2
    for name in names:
        assert ("Cluster", "Object", name) in usages


def test_removing_the_only_pool_of_a_driver_removes_its_installer(gke: Fleet) -> None:
    """The L4 pool is the example's only one on the default driver: without it, only the
    H100 pool's latest-driver installer stays."""

    def remove(objects: list[Obj]) -> None:
        spec = find(objects, "InferenceCluster", "gpu-us-central")["spec"]
        spec["nodePools"] = [p for p in spec["nodePools"] if p["name"] != "l4"]

    shrunk = gke.edit(remove)
    assert shrunk.result.ok, shrunk.result.errors
    assert set(installers(shrunk)) == {"latest"}
    assert installers(shrunk)["latest"]["spec"] == installers(gke)["latest"]["spec"]


def dra_driver_values(fleet: Fleet) -> Obj:
    (release,) = [
        r
        for r in fleet.all("Release")
        if r["spec"]["forProvider"]["chart"]["name"] == "nvidia-dra-driver-gpu"
    ]
    return release["spec"]["forProvider"]["values"]


def test_the_dra_driver_reads_gkes_driver_directory(gke: Fleet, renderer: Renderer) -> None:
    values = dra_driver_values(gke)
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
    assert values["kubeletPlugin"]["priorityClassName"] == ""
    eks = renderer.paths("clusters/eks")
    assert "nvidiaDriverRoot" not in dra_driver_values(eks)
    assert "priorityClassName" not in dra_driver_values(eks)["kubeletPlugin"]
