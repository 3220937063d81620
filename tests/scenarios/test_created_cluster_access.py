"""What reaches inside a cluster Modelplane creates (examples/clusters): the
credentials its ClusterProviderConfigs carry, and the node agents that must run on
its tainted GPU nodes."""

from typing import Any

import pytest

from .fleets import Fleet, Renderer

Obj = dict[str, Any]
EKS_CLUSTER = "gpu-us-east"
GKE_CLUSTER = "gpu-us-central"
SYSTEM = "modelplane-system"


@pytest.fixture(scope="module")
def eks(renderer: Renderer) -> Fleet:
    return renderer.paths("clusters/eks")


@pytest.fixture(scope="module")
def gke(renderer: Renderer) -> Fleet:
    return renderer.paths("clusters/gke")


def provider_config_specs(fleet: Fleet, cluster: str) -> dict[str, Obj]:
    """The spec of each ClusterProviderConfig that reaches `cluster`, by API group."""
    return {
        o["apiVersion"].split("/")[0]: o["spec"]
        for o in fleet.all("ClusterProviderConfig")
        if o["metadata"]["name"] == cluster
        and o["apiVersion"].split("/")[0] in ("kubernetes.m.crossplane.io", "helm.m.crossplane.io")
    }


def test_a_gke_cluster_is_reached_with_the_credentials_it_is_created_with(
    gke: Fleet, eks: Fleet
) -> None:
    """The GKE kubeconfig has no credentials: both ClusterProviderConfigs add the
    service account key of the GCP ClusterProviderConfig the cluster names
    (examples/clusters/gke/credentials.yaml). EKS's kubeconfig carries ClusterAuth's
    token and gets no identity."""
    (gcp,) = [o for o in gke.objects if o["apiVersion"] == "gcp.m.upbound.io/v1beta1"]
    kubeconfig = {"name": f"{GKE_CLUSTER}-kubeconfig", "namespace": SYSTEM, "key": "kubeconfig"}
    want = {
        "credentials": {"source": "Secret", "secretRef": kubeconfig},
        "identity": {
            "type": "GoogleApplicationCredentials",
            "source": "Secret",
            "secretRef": gcp["spec"]["credentials"]["secretRef"],
        },
    }
    assert provider_config_specs(gke, GKE_CLUSTER) == {
        "kubernetes.m.crossplane.io": want,
        "helm.m.crossplane.io": want,
    }
    eks_specs = provider_config_specs(eks, EKS_CLUSTER)
    assert set(eks_specs) == {"kubernetes.m.crossplane.io", "helm.m.crossplane.io"}
    assert all("identity" not in spec for spec in eks_specs.values())


@pytest.mark.parametrize("example", ["eks", "gke"])
def test_the_daemonsets_on_gpu_nodes_tolerate_the_clouds_gpu_taint(
    request: pytest.FixtureRequest, example: str
) -> None:
    """EKS and GKE taint their GPU nodes nvidia.com/gpu (the classes declare it): Node
    Feature Discovery's worker and the DRA driver's kubelet plugin must run there, or
    no GPU is ever published and every claim stays unallocated."""
    fleet: Fleet = request.getfixturevalue(example)
    values = {
        o["spec"]["forProvider"]["chart"]["name"]: o["spec"]["forProvider"].get("values", {})
        for o in fleet.all("Release")
    }
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    assert values["node-feature-discovery"]["worker"]["tolerations"] == [gpu]
    assert values["nvidia-dra-driver-gpu"]["kubeletPlugin"]["tolerations"] == [gpu]
