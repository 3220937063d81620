"""A created cluster's Kubernetes version: the one it is created at is the one
everything on it is rendered for.

`spec.cluster.eks.version` (or `gke.version`), when set, is what the cloud runs;
`spec.kubernetesVersion`, which the XRD defaults to 1.34, is the version of an
Existing cluster and of a created one whose sub-block names none
(design/provisioning.md). Gangs through the Workload API show which version a
cluster's replicas are rendered for: 1.34 serves no Workload version, 1.35 serves
v1alpha1.
"""

from typing import Any

import pytest

from modelplane.core.vocabulary import Reason

from .fleets import Fleet, Renderer

Obj = dict[str, Any]
CLUSTER = "gpu-us-east"


@pytest.fixture(scope="module")
def eks(renderer: Renderer) -> Fleet:
    fleet = renderer.paths("clusters/eks")
    assert fleet.result.ok, fleet.result.errors
    return fleet


def _role() -> Obj:
    hopper = 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'
    return {
        "nodeSelector": {"devices": [{"name": "gpu", "count": 8, "selectors": [{"cel": hopper}]}]},
        "workers": {
            "topology": {"tensor": 8},
            "template": {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm:1"}]}},
        },
    }


# A disaggregated replica: on a cluster serving the Workload API, its prefill and
# decode Deployments are one gang through a Workload (tests/scenarios/test_workload_api.py).
SPLIT: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "metadata": {"name": "split", "namespace": "team-a"},
    "spec": {
        "replicas": 1,
        "clusterSelector": {"matchLabels": {"cloud": "aws"}},
        "model": {"uri": "hf://org/model"},
        "prefill": _role(),
        "decode": _role(),
    },
}


def _versions(eks: Fleet, *, kubernetes: str, cloud: str) -> Fleet:
    def change(objects: list[Obj]) -> None:
        objects.append(SPLIT)
        for obj in objects:
            if obj["kind"] == "InferenceCluster" and obj["metadata"]["name"] == CLUSTER:
                spec = obj["spec"]
                spec["kubernetesVersion"] = kubernetes
                spec["cluster"]["eks"]["version"] = cloud
                spec["scheduling"] = {"provider": "Default", "gang": {"api": "Workload"}}

    out = eks.edit(change)
    assert out.result.ok, out.result.errors
    assert out.result.converged
    return out


def _eks_cluster_version(fleet: Fleet) -> str:
    (cluster,) = [
        o for o in fleet.all("Cluster") if o["apiVersion"].startswith("eks.aws.m.upbound.io/")
    ]
    return str(cluster["spec"]["forProvider"]["version"])


def test_a_cluster_upgraded_a_minor_version_is_rendered_for_it(eks: Fleet) -> None:
    """kubernetesVersion left at its 1.34 default: the running 1.34 cluster is upgraded
    to 1.35 (one minor version, as the cloud allows), so its replicas gang through the
    Workload API 1.35 serves."""
    fleet = _versions(eks, kubernetes="1.34", cloud="1.35")

    assert _eks_cluster_version(fleet) == "1.35"
    condition = fleet.condition("InferenceCluster", CLUSTER, "SchedulingConfigured")
    assert condition["reason"] != Reason.GANG_API_UNAVAILABLE, condition
    workloads = fleet.manifests("Workload")
    assert workloads
    assert {w["apiVersion"] for w in workloads} == {"scheduling.k8s.io/v1alpha1"}


def test_kubernetes_version_does_not_outrun_the_version_the_cloud_runs(eks: Fleet) -> None:
    """Rendering for 1.36 a cluster created at 1.34 would compose what its API
    server does not serve: the cloud's version wins."""
    fleet = _versions(eks, kubernetes="1.36", cloud="1.34")

    assert _eks_cluster_version(fleet) == "1.34"
    condition = fleet.condition("InferenceCluster", CLUSTER, "SchedulingConfigured")
    assert condition["reason"] == Reason.GANG_API_UNAVAILABLE
    assert "Kubernetes 1.34 serves no scheduling.k8s.io Workload version" in condition["message"]
    assert fleet.manifests("Workload") == []


def test_a_version_the_cloud_refuses_renders_nothing_for_it(eks: Fleet) -> None:
    """A jump from the running 1.34 to 1.36 is refused and the cluster kept at 1.34:
    its replicas are rendered for the 1.34 it runs (no Workload API), as its status
    says, not for the 1.36 the spec asks."""
    fleet = _versions(eks, kubernetes="1.34", cloud="1.36")

    assert _eks_cluster_version(fleet) == "1.34"
    provisioned = fleet.condition("InferenceCluster", CLUSTER, "Provisioned")
    assert provisioned["reason"] == Reason.INVALID_PROVISIONING
    (cluster,) = [o for o in fleet.all("InferenceCluster") if o["metadata"]["name"] == CLUSTER]
    assert cluster["status"]["kubernetesVersion"] == "1.34"
    condition = fleet.condition("InferenceCluster", CLUSTER, "SchedulingConfigured")
    assert condition["reason"] == Reason.GANG_API_UNAVAILABLE
    assert fleet.manifests("Workload") == []
    assert fleet.manifests("PodGroup") == []
