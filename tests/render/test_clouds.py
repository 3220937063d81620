"""What the simulated upjet providers report on a created cluster's kinds."""

import base64
from typing import Any

from modelplane_cli.render.clouds import at_provider, connection_secret

NS = "modelplane-system"


def managed(api_version: str, kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": NS, "uid": "u-1"},
        "spec": spec,
    }


CLUSTER = managed(
    "eks.aws.m.upbound.io/v1beta1",
    "Cluster",
    "gpu",
    {"forProvider": {"region": "us-east-1", "version": "1.34"}},
)
AUTH = managed(
    "eks.aws.m.upbound.io/v1beta1",
    "ClusterAuth",
    "gpu",
    {
        "forProvider": {"region": "us-east-1", "clusterNameRef": {"name": "gpu"}},
        "writeConnectionSecretToRef": {"name": "gpu-kubeconfig"},
    },
)


def test_the_kubeconfig_reaches_the_endpoint_the_cluster_reports() -> None:
    endpoint = (at_provider(CLUSTER) or {})["endpoint"]
    assert endpoint.endswith(".gr7.us-east-1.eks.amazonaws.com")
    secret = connection_secret(AUTH)
    assert secret is not None
    assert secret["metadata"]["name"] == "gpu-kubeconfig"
    assert secret["metadata"]["namespace"] == NS
    (owner,) = secret["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "ClusterAuth",
        "gpu",
        "u-1",
        True,
    )
    kubeconfig = base64.b64decode(secret["data"]["kubeconfig"]).decode()
    assert f"server: {endpoint}" in kubeconfig


def test_a_node_group_reports_its_size_within_its_bounds() -> None:
    group = managed(
        "eks.aws.m.upbound.io/v1beta1",
        "NodeGroup",
        "gpu-h100",
        {
            "forProvider": {"region": "us-east-1", "scalingConfig": {"minSize": 1, "maxSize": 4}},
            "initProvider": {"scalingConfig": {"desiredSize": 0}},
        },
    )
    reported = at_provider(group) or {}
    assert reported["status"] == "ACTIVE"
    assert reported["scalingConfig"] == {"minSize": 1, "maxSize": 4, "desiredSize": 1}


def test_a_node_pool_reports_nodes_per_zone_within_its_total() -> None:
    pool = managed(
        "container.gcp.m.upbound.io/v1beta1",
        "NodePool",
        "gpu-l4",
        {
            "forProvider": {
                "location": "us-central1",
                "project": "p",
                "nodeLocations": ["us-central1-a", "us-central1-c"],
                "autoscaling": {"totalMinNodeCount": 2, "totalMaxNodeCount": 6},
            },
            "initProvider": {"initialNodeCount": 2},
        },
    )
    reported = at_provider(pool) or {}
    assert reported["nodeCount"] == 2
    assert len(reported["managedInstanceGroupUrls"]) == 2


def test_kinds_of_other_providers_are_not_the_clouds_business() -> None:
    release = managed("helm.m.crossplane.io/v1beta1", "Release", "r", {"forProvider": {}})
    assert at_provider(release) is None
    assert connection_secret(release) is None
