"""Clusters Modelplane creates (examples/clusters): creation, pool edits, bad input,
and the order a deletion takes, through the real APIs and functions."""

import json
from collections.abc import Callable
from typing import Any

import pytest

from .fleets import Fleet, Renderer, find

Obj = dict[str, Any]
EKS_CLUSTER = "gpu-us-east"
GKE_CLUSTER = "gpu-us-central"
SYSTEM = "modelplane-system"
EKS_GROUP = "eks.aws.m.upbound.io"
GKE_GROUP = "container.gcp.m.upbound.io"
IAM_GROUP = "iam.aws.m.upbound.io"


@pytest.fixture(scope="module")
def eks(renderer: Renderer) -> Fleet:
    fleet = renderer.paths("clusters/eks")
    assert fleet.result.ok, fleet.result.errors
    assert fleet.result.converged
    return fleet


@pytest.fixture(scope="module")
def gke(renderer: Renderer) -> Fleet:
    fleet = renderer.paths("clusters/gke")
    assert fleet.result.ok, fleet.result.errors
    assert fleet.result.converged
    return fleet


def cloud(fleet: Fleet, group: str, kind: str) -> list[Obj]:
    return [
        o for o in fleet.all(kind) if o["apiVersion"].split("/")[0] == group and kind == o["kind"]
    ]


def cloud_name(obj: Obj) -> str:
    """The name the cloud knows a resource by: its external name (a node group's,
    beside a `metadata.name` with a digest no other cluster's can take), else its name."""
    meta = obj["metadata"]
    return meta.get("annotations", {}).get("crossplane.io/external-name") or meta["name"]


def by_name(objects: list[Obj]) -> dict[str, Obj]:
    return {cloud_name(o): o for o in objects}


def edited(fleet: Fleet, change: Callable[[list[Obj]], None]) -> Fleet:
    out = fleet.edit(change)
    assert out.result.ok, out.result.errors
    assert out.result.converged
    return out


def cloud_keys(fleet: Fleet) -> set[tuple[str, str]]:
    return {
        (o["kind"], cloud_name(o))
        for o in fleet.objects
        if o["apiVersion"].split("/")[0].endswith((".aws.m.upbound.io", ".gcp.m.upbound.io"))
    }


def pool_capacity(fleet: Fleet, cluster: str) -> dict[str, Obj]:
    status = fleet.one("InferenceCluster", cluster)["status"]
    return {p["name"]: p for p in status["capacity"]["pools"]}


def test_an_eks_cluster_is_created_whole(eks: Fleet) -> None:
    kinds = {kind for kind, _ in cloud_keys(eks)}
    assert kinds == {
        "VPC",
        "Subnet",
        "InternetGateway",
        "EIP",
        "NATGateway",
        "RouteTable",
        "Route",
        "RouteTableAssociation",
        "Role",
        "RolePolicyAttachment",
        "Cluster",
        "ClusterAuth",
        "Addon",
        "NodeGroup",
        "Policy",
        "PodIdentityAssociation",
    }
    subnets = cloud(eks, "ec2.aws.m.upbound.io", "Subnet")
    zones = {s["spec"]["forProvider"]["availabilityZone"] for s in subnets}
    assert zones == {"us-east-1a", "us-east-1b"}
    groups = by_name(cloud(eks, EKS_GROUP, "NodeGroup"))
    h100 = groups[f"{EKS_CLUSTER}-h100"]["spec"]
    assert h100["forProvider"]["instanceTypes"] == ["p5.48xlarge"]
    assert h100["forProvider"]["amiType"] == "AL2023_x86_64_NVIDIA"
    assert h100["forProvider"]["labels"] == {"modelplane.ai/pool": "h100"}
    assert h100["forProvider"]["taint"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
    ]
    # Autoscaled: the provider never sets the size the autoscaler owns. It keeps a node:
    # the autoscaler cannot grow an EKS group of DRA devices from zero.
    assert h100["forProvider"]["scalingConfig"] == {"minSize": 1, "maxSize": 4}
    assert h100["initProvider"] == {"scalingConfig": {"desiredSize": 1}}
    l4 = groups[f"{EKS_CLUSTER}-l4"]["spec"]["forProvider"]
    assert l4["capacityType"] == "SPOT"
    assert l4["scalingConfig"] == {"minSize": 2, "maxSize": 2, "desiredSize": 2}
    assert {a["spec"]["forProvider"]["addonName"] for a in cloud(eks, EKS_GROUP, "Addon")} == {
        "vpc-cni",
        "kube-proxy",
        "coredns",
        "eks-pod-identity-agent",
    }


def test_an_eks_cluster_runs_the_autoscaler_its_pools_grow_by(eks: Fleet) -> None:
    (release,) = [r for r in eks.all("Release") if "cluster-autoscaler" in r["metadata"]["name"]]
    for_provider = release["spec"]["forProvider"]
    assert for_provider["chart"]["name"] == "cluster-autoscaler"
    assert for_provider["namespace"] == "kube-system"
    assert for_provider["values"]["autoDiscovery"] == {"clusterName": EKS_CLUSTER}
    (association,) = cloud(eks, EKS_GROUP, "PodIdentityAssociation")
    assert association["spec"]["forProvider"]["serviceAccount"] == "cluster-autoscaler"
    # Uninstalled while the cluster can still be reached.
    order = _deletion_order(eks)
    assert order.index(("Release", release["metadata"]["name"])) < order.index(
        ("Cluster", EKS_CLUSTER)
    )


def test_the_created_cluster_is_reached_through_its_connection_secret(eks: Fleet) -> None:
    (auth,) = cloud(eks, EKS_GROUP, "ClusterAuth")
    secret_name = auth["spec"]["writeConnectionSecretToRef"]["name"]
    (secret,) = [s for s in eks.all("Secret") if s["metadata"]["name"] == secret_name]
    assert secret["metadata"]["namespace"] == SYSTEM
    assert set(secret["data"]) == {"kubeconfig"}
    for config in eks.all("ClusterProviderConfig"):
        if config["apiVersion"].startswith(("kubernetes.m.", "helm.m.")):
            assert config["spec"]["credentials"]["secretRef"] == {
                "name": secret_name,
                "namespace": SYSTEM,
                "key": "kubeconfig",
            }
    condition = eks.condition("InferenceCluster", EKS_CLUSTER, "Provisioned")
    assert condition["status"] == "True"
    assert ".eks.amazonaws.com" in condition["message"]


def test_a_pool_at_zero_nodes_with_room_is_placed_and_waits_for_capacity(gke: Fleet) -> None:
    # GKE's example: on EKS a pool of DRA devices keeps a node.
    cluster = gke.one("InferenceCluster", GKE_CLUSTER)["status"]
    placeable = {p["name"]: p["nodes"] for p in cluster["gpuPools"]}
    assert placeable == {"h100": 4, "l4": 6}
    capacity = pool_capacity(gke, GKE_CLUSTER)
    assert (capacity["h100"]["nodes"], capacity["h100"]["maxNodes"]) == (0, 4)
    (replica,) = gke.all("ModelReplica")
    name = replica["metadata"]["name"]
    assert gke.condition("ModelReplica", name, "Accepted")["status"] == "True"
    serving = gke.condition("ModelReplica", name, "Serving")
    assert (serving["status"], serving["reason"]) == ("False", "WaitingForCapacity")
    assert "pool h100 has 0 of up to 4 nodes (as the cloud reports its size)" in serving["message"]


def test_the_eks_example_serves_on_the_node_its_dra_pool_keeps(eks: Fleet) -> None:
    capacity = pool_capacity(eks, EKS_CLUSTER)
    assert (capacity["h100"]["nodes"], capacity["h100"]["maxNodes"]) == (1, 4)
    assert capacity["l4"]["nodes"] == 2
    (replica,) = eks.all("ModelReplica")
    assert eks.condition("ModelReplica", replica["metadata"]["name"], "Serving")["status"] == "True"


def test_a_node_joining_serves_the_waiting_replica(gke: Fleet) -> None:
    def one_node(objects: list[Obj]) -> None:
        pool = find(objects, "InferenceCluster", GKE_CLUSTER)["spec"]["nodePools"][0]
        pool.update(minNodes=1, nodeCount=1)

    grown = edited(gke, one_node)
    assert pool_capacity(grown, GKE_CLUSTER)["h100"]["nodes"] >= 1
    (replica,) = grown.all("ModelReplica")
    serving = grown.condition("ModelReplica", replica["metadata"]["name"], "Serving")
    assert serving["status"] == "True"


def test_a_fixed_pool_is_resized_in_place(eks: Fleet) -> None:
    def resize(objects: list[Obj]) -> None:
        find(objects, "InferenceCluster", EKS_CLUSTER)["spec"]["nodePools"][1]["nodeCount"] = 3

    resized = edited(eks, resize)
    assert cloud_keys(resized) == cloud_keys(eks)
    group = by_name(cloud(resized, EKS_GROUP, "NodeGroup"))[f"{EKS_CLUSTER}-l4"]
    assert group["spec"]["forProvider"]["scalingConfig"] == {
        "minSize": 3,
        "maxSize": 3,
        "desiredSize": 3,
    }
    assert pool_capacity(resized, EKS_CLUSTER)["l4"]["nodes"] == 3


def test_an_autoscaled_pools_minimum_raised_past_its_size_moves_the_size(eks: Fleet) -> None:
    """EKS refuses bounds that leave an autoscaled group's size outside them, so the
    size goes with the bounds once, and then is the autoscaler's again."""

    def raise_minimum(objects: list[Obj]) -> None:
        pools = find(objects, "InferenceCluster", EKS_CLUSTER)["spec"]["nodePools"]
        pools[0].update(minNodes=2, nodeCount=2)

    raised = edited(eks, raise_minimum)
    group = by_name(cloud(raised, EKS_GROUP, "NodeGroup"))[f"{EKS_CLUSTER}-h100"]
    synced = next(c for c in group["status"]["conditions"] if c["type"] == "Synced")
    assert synced["status"] == "True", synced
    assert group["status"]["atProvider"]["scalingConfig"]["desiredSize"] == 2
    # Back in the bounds, the size is left to the autoscaler (initProvider alone).
    assert group["spec"]["forProvider"]["scalingConfig"] == {"minSize": 2, "maxSize": 4}
    assert pool_capacity(raised, EKS_CLUSTER)["h100"]["nodes"] == 2


def test_an_added_pool_gets_its_node_group_and_nothing_else_changes(gke: Fleet) -> None:
    def add(objects: list[Obj]) -> None:
        pools = find(objects, "InferenceCluster", GKE_CLUSTER)["spec"]["nodePools"]
        pools.append({"name": "l4-batch", "className": "gke-l4-1x", "nodeCount": 1})

    grown = edited(gke, add)
    assert cloud_keys(grown) - cloud_keys(gke) == {("NodePool", f"{GKE_CLUSTER}-l4-batch")}
    assert cloud_keys(gke) <= cloud_keys(grown)
    pool = by_name(cloud(grown, GKE_GROUP, "NodePool"))[f"{GKE_CLUSTER}-l4-batch"]
    assert pool["spec"]["forProvider"]["autoscaling"]["totalMaxNodeCount"] == 1
    assert pool["spec"]["forProvider"]["nodeConfig"]["labels"]["modelplane.ai/pool"] == "l4-batch"
    assert pool_capacity(grown, GKE_CLUSTER)["l4-batch"]["nodes"] == 1
    usages = [u["spec"] for u in grown.all("Usage")]
    assert any(u["by"]["resourceRef"]["name"] == pool["metadata"]["name"] for u in usages)


def test_a_removed_pool_loses_only_its_node_pool(gke: Fleet) -> None:
    def remove(objects: list[Obj]) -> None:
        spec = find(objects, "InferenceCluster", GKE_CLUSTER)["spec"]
        spec["nodePools"] = [p for p in spec["nodePools"] if p["name"] != "l4"]

    shrunk = edited(gke, remove)
    assert cloud_keys(gke) - cloud_keys(shrunk) == {("NodePool", f"{GKE_CLUSTER}-l4")}
    assert cloud_keys(shrunk) <= cloud_keys(gke)
    gone = by_name(cloud(gke, GKE_GROUP, "NodePool"))[f"{GKE_CLUSTER}-l4"]["metadata"]["name"]
    usages = [u["spec"] for u in shrunk.all("Usage")]
    assert not any(u["by"]["resourceRef"]["name"] == gone for u in usages)


def test_a_pool_whose_class_cannot_be_built_keeps_its_node_group(eks: Fleet) -> None:
    def drop_provisioning(objects: list[Obj]) -> None:
        del find(objects, "InferenceClass", "eks-l4-1x")["spec"]["provisioning"]

    broken = edited(eks, drop_provisioning)
    assert cloud_keys(broken) == cloud_keys(eks)
    condition = broken.condition("InferenceCluster", EKS_CLUSTER, "Provisioned")
    assert (condition["status"], condition["reason"]) == ("False", "InvalidProvisioning")
    assert "spec.nodePools[1].className" in condition["message"]
    assert "eks-l4-1x" in condition["message"]


def _deletion_order(fleet: Fleet) -> list[tuple[str, str]]:
    """An order the Usages allow deleting everything in: nothing before what uses it."""
    nodes = {(o["kind"], o["metadata"]["name"]) for o in fleet.objects if o["kind"] != "Usage"}
    blocked_by: dict[tuple[str, str], set[tuple[str, str]]] = {n: set() for n in nodes}
    for usage in fleet.all("Usage"):
        of, by = usage["spec"]["of"], usage["spec"]["by"]
        of_key = (of["kind"], of["resourceRef"]["name"])
        by_key = (by["kind"], by["resourceRef"]["name"])
        assert of_key in nodes and by_key in nodes, usage["metadata"]["name"]
        blocked_by[of_key].add(by_key)
    order: list[tuple[str, str]] = []
    remaining = set(nodes)
    while remaining:
        free = sorted(n for n in remaining if not blocked_by[n] & remaining)
        assert free, f"a Usage cycle among {sorted(remaining)}"
        order.extend(free)
        remaining -= set(free)
    return order


@pytest.mark.parametrize(("example", "group"), [("eks", EKS_GROUP), ("gke", GKE_GROUP)])
def test_deletion_goes_replicas_node_groups_cluster_network(
    example: str, group: str, request: pytest.FixtureRequest
) -> None:
    fleet: Fleet = request.getfixturevalue(example)
    order = _deletion_order(fleet)
    position = {node: i for i, node in enumerate(order)}
    (replica,) = fleet.all("ModelReplica")
    (cluster,) = cloud(fleet, group, "Cluster")
    cluster_at = position[("Cluster", cluster["metadata"]["name"])]
    assert position[("ModelReplica", replica["metadata"]["name"])] < cluster_at
    pools = cloud(fleet, group, "NodeGroup" if group == EKS_GROUP else "NodePool")
    assert all(position[(p["kind"], p["metadata"]["name"])] < cluster_at for p in pools)
    network = [
        o
        for o in fleet.objects
        if o["kind"] in ("VPC", "Subnet", "NATGateway", "Network", "Subnetwork")
    ]
    assert network
    assert all(position[(o["kind"], o["metadata"]["name"])] > cluster_at for o in network)
    if group == EKS_GROUP:
        (auth,) = cloud(fleet, group, "ClusterAuth")
        replica_at = position[("ModelReplica", replica["metadata"]["name"])]
        assert position[("ClusterAuth", auth["metadata"]["name"])] > replica_at


def usage_edges(fleet: Fleet) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    """Each Usage as ((kind, name) it keeps, (kind, name) keeping it)."""
    return {
        (
            (u["spec"]["of"]["kind"], u["spec"]["of"]["resourceRef"]["name"]),
            (u["spec"]["by"]["kind"], u["spec"]["by"]["resourceRef"]["name"]),
        )
        for u in fleet.all("Usage")
    }


@pytest.mark.parametrize(("example", "group"), [("eks", EKS_GROUP), ("gke", GKE_GROUP)])
def test_the_cluster_keeps_its_system_nodes_and_its_identities_keep_the_cluster(
    example: str, group: str, request: pytest.FixtureRequest
) -> None:
    """The system node group is a node group like the pools' (EKS refuses to delete a
    cluster with node groups attached); on EKS the IAM roles and their policies outlive
    the cluster, so EKS can still clean up the security groups and network interfaces
    it made when the cluster and its node groups go."""
    fleet: Fleet = request.getfixturevalue(example)
    usages = usage_edges(fleet)
    (cluster,) = cloud(fleet, group, "Cluster")
    kept = ("Cluster", cluster["metadata"]["name"])
    kind = "NodeGroup" if group == EKS_GROUP else "NodePool"
    (system,) = [p for p in cloud(fleet, group, kind) if cloud_name(p).endswith("-system")]
    assert (kept, (kind, system["metadata"]["name"])) in usages
    if group == EKS_GROUP:
        # The roles the cluster and its nodes assume, and their policies (the
        # autoscaler's role is its pod's, not the cluster's).
        roles = {
            r["metadata"]["name"]
            for r in cloud(fleet, IAM_GROUP, "Role")
            if json.loads(r["spec"]["forProvider"]["assumeRolePolicy"])["Statement"][0][
                "Principal"
            ]["Service"]
            in ("eks.amazonaws.com", "ec2.amazonaws.com")
        }
        attachments = [
            a
            for a in cloud(fleet, IAM_GROUP, "RolePolicyAttachment")
            if a["spec"]["forProvider"]["roleRef"]["name"] in roles
        ]
        assert len(roles) == 2 and attachments
        for identity in [("Role", name) for name in sorted(roles)] + [
            (a["kind"], a["metadata"]["name"]) for a in attachments
        ]:
            assert (identity, kept) in usages


@pytest.mark.parametrize(("example", "group"), [("eks", EKS_GROUP), ("gke", GKE_GROUP)])
def test_every_release_inside_keeps_the_cluster_and_its_kubeconfig_writer(
    example: str, group: str, request: pytest.FixtureRequest
) -> None:
    """provider-helm uninstalls a Release through the cluster's kubeconfig: every
    Release inside a created cluster (the serving stack's and the cloud's own) keeps
    the cluster, and on EKS the ClusterAuth that writes the kubeconfig, until it is
    uninstalled, or it would stay Terminating once they went."""
    fleet: Fleet = request.getfixturevalue(example)
    usages = usage_edges(fleet)
    (cluster,) = cloud(fleet, group, "Cluster")
    kept = [("Cluster", cluster["metadata"]["name"])]
    if group == EKS_GROUP:
        (auth,) = cloud(fleet, group, "ClusterAuth")
        kept.append(("ClusterAuth", auth["metadata"]["name"]))
    releases = [r["metadata"]["name"] for r in fleet.all("Release")]
    assert len(releases) >= 3
    for release in releases:
        for of in kept:
            assert (of, ("Release", release)) in usages, (of, release)
