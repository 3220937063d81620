"""What the simulated upjet providers report on a created cluster's kinds."""

import base64
from typing import Any

import pytest

from modelplane_cli.render.clouds import at_provider, connection_secret, refusal

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


def _running_group(scaling: dict[str, int], size: int) -> dict[str, Any]:
    """An autoscaled node group that runs `size` nodes, asked for `scaling` now."""
    group = managed(
        "eks.aws.m.upbound.io/v1beta1",
        "NodeGroup",
        "gpu-h100",
        {
            "forProvider": {"region": "us-east-1", "scalingConfig": scaling},
            "initProvider": {"scalingConfig": {"desiredSize": 1}},
        },
    )
    group["status"] = {"atProvider": {"scalingConfig": {"desiredSize": size}}}
    return group


def test_an_existing_group_keeps_its_size_when_initprovider_changes() -> None:
    # upjet sends initProvider only on create: the group runs what it runs.
    group = _running_group({"minSize": 1, "maxSize": 8}, 3)
    group["spec"]["initProvider"]["scalingConfig"]["desiredSize"] = 6
    assert (at_provider(group) or {})["scalingConfig"]["desiredSize"] == 3
    assert refusal(group) is None


@pytest.mark.parametrize(
    ("scaling", "size", "why"),
    [
        (
            {"minSize": 2, "maxSize": 4},
            1,
            "Minimum capacity 2 can't be greater than desired size 1",
        ),
        ({"minSize": 1, "maxSize": 2}, 3, "desiredSize can't be greater than maxSize"),
    ],
)
def test_bounds_that_leave_the_size_outside_them_are_refused(
    scaling: dict[str, int], size: int, why: str
) -> None:
    refused = refusal(_running_group(scaling, size))
    assert refused is not None
    assert refused.startswith("async update failed: ")
    assert refused.endswith(f"InvalidParameterException: {why}")
    # With a size of its own, in the bounds, EKS takes them.
    asked = _running_group({**scaling, "desiredSize": scaling["minSize"]}, size)
    assert refusal(asked) is None
    assert (at_provider(asked) or {})["scalingConfig"]["desiredSize"] == scaling["minSize"]


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


@pytest.mark.parametrize("size", [float("inf"), float("nan"), 2.5, "3", True])
def test_a_reported_size_that_is_no_count_is_taken_as_none_reported(size: object) -> None:
    # An edited world's nonsense: the group is read as not created yet, never a crash.
    group = _running_group({"minSize": 2, "maxSize": 4}, 1)
    group["status"]["atProvider"]["scalingConfig"]["desiredSize"] = size
    assert refusal(group) is None
    assert (at_provider(group) or {})["scalingConfig"]["desiredSize"] == 2
