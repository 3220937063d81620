"""The network of an EKS cluster Modelplane creates, when no subnets are given.

One VPC (10.0.0.0/16); per zone a small public subnet (load balancers, the NAT
gateway) and a large private one (nodes, and pods: the VPC CNI gives each pod a
VPC address); an internet gateway; one NAT gateway, in the first zone's public
subnet, for the private subnets' egress (one, not one per zone: a zone outage
stops egress, but idle cost is one gateway); a public and a private route table
with their default routes and associations. Subnets carry the tags the AWS load
balancer integration looks for: `kubernetes.io/cluster/<EKS cluster name>`, which
must be the EKS cluster's own name (the cloud provider drops subnets tagged for
any other cluster), and the `role/elb` or `role/internal-elb` marker.
"""

from dataclasses import dataclass, field

from .aws import EC2, MANAGED_BY_TAG
from .model import Manifest, body, ref
from .names import cloud_name

VPC_CIDR = "10.0.0.0/16"


def public_cidr(index: int) -> str:
    return f"10.0.{4 * index}.0/22"


def private_cidr(index: int) -> str:
    return f"10.0.{128 + 16 * index}.0/20"


@dataclass
class Network:
    """The network's resources by key, and the private subnets' names (where nodes go)."""

    resources: dict[str, Manifest] = field(default_factory=dict[str, Manifest])
    private_subnets: list[str] = field(default_factory=list[str])


def compose_network(
    cluster: str,
    cluster_name: str,
    namespace: str,
    region: str,
    zones: list[str],
    provider_config: dict[str, str],
) -> Network:
    """The network of InferenceCluster `cluster`, whose EKS cluster is `cluster_name`."""
    out = Network()
    tags = {MANAGED_BY_TAG: cluster}

    def add(key: str, kind: str, suffix: str, for_provider: dict[str, object]) -> str:
        name = cloud_name(cluster, suffix)
        fields = {"region": region, **for_provider, "tags": {**tags, "Name": name}}
        if kind in ("Route", "RouteTableAssociation"):
            fields.pop("tags")
        out.resources[key] = body(EC2, kind, name, namespace, provider_config, fields)
        return name

    vpc = add(
        "vpc",
        "VPC",
        "vpc",
        {"cidrBlock": VPC_CIDR, "enableDnsHostnames": True, "enableDnsSupport": True},
    )
    gateway = add("internet-gateway", "InternetGateway", "igw", {"vpcIdRef": ref(vpc)})
    public_table = add("route-table-public", "RouteTable", "public", {"vpcIdRef": ref(vpc)})
    private_table = add("route-table-private", "RouteTable", "private", {"vpcIdRef": ref(vpc)})
    elb = {f"kubernetes.io/cluster/{cluster_name}": "shared"}
    first_public = ""
    for index, zone in enumerate(zones):
        public = add(
            f"subnet-public-{zone}",
            "Subnet",
            f"public-{zone}",
            {
                "vpcIdRef": ref(vpc),
                "availabilityZone": zone,
                "cidrBlock": public_cidr(index),
                "mapPublicIpOnLaunch": True,
            },
        )
        out.resources[f"subnet-public-{zone}"]["spec"]["forProvider"]["tags"].update(
            {**elb, "kubernetes.io/role/elb": "1"}
        )
        private = add(
            f"subnet-private-{zone}",
            "Subnet",
            f"private-{zone}",
            {"vpcIdRef": ref(vpc), "availabilityZone": zone, "cidrBlock": private_cidr(index)},
        )
        out.resources[f"subnet-private-{zone}"]["spec"]["forProvider"]["tags"].update(
            {**elb, "kubernetes.io/role/internal-elb": "1"}
        )
        out.private_subnets.append(private)
        first_public = first_public or public
        add(
            f"route-table-association-public-{zone}",
            "RouteTableAssociation",
            f"public-{zone}",
            {"routeTableIdRef": ref(public_table), "subnetIdRef": ref(public)},
        )
        add(
            f"route-table-association-private-{zone}",
            "RouteTableAssociation",
            f"private-{zone}",
            {"routeTableIdRef": ref(private_table), "subnetIdRef": ref(private)},
        )
    address = add("nat-address", "EIP", "nat", {"domain": "vpc"})
    nat = add(
        "nat-gateway",
        "NATGateway",
        "nat",
        {"allocationIdRef": ref(address), "subnetIdRef": ref(first_public)},
    )
    add(
        "route-public-default",
        "Route",
        "public-default",
        {
            "routeTableIdRef": ref(public_table),
            "destinationCidrBlock": "0.0.0.0/0",
            "gatewayIdRef": ref(gateway),
        },
    )
    add(
        "route-private-default",
        "Route",
        "private-default",
        {
            "routeTableIdRef": ref(private_table),
            "destinationCidrBlock": "0.0.0.0/0",
            "natGatewayIdRef": ref(nat),
        },
    )
    return out
