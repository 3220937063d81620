"""EKS: a cluster, its IAM, its network unless given, and one managed node group per pool.

- IAM: the cluster role (AmazonEKSClusterPolicy) and the node role (worker,
  CNI and registry policies), each with its policy attachments.
- The cluster authenticates through EKS access entries (`authenticationMode:
  API`). The identity the AWS provider creates it with gets the cluster-admin
  access entry EKS makes for the creator (`bootstrapClusterCreatorAdminPermissions`);
  that is the identity ClusterAuth mints the kubeconfig with, so
  provider-kubernetes and provider-helm reach the cluster as it. (A second
  AccessEntry for the same principal would be refused by EKS as a duplicate.)
  Managed node groups get their node role's access entry from EKS too.
- `ClusterAuth` writes the kubeconfig, with a token it refreshes, to the
  connection Secret the provider-kubernetes and provider-helm ProviderConfigs read.
- Add-ons: the VPC CNI, kube-proxy, CoreDNS and the Pod Identity agent; the
  GPU driver comes with the NVIDIA AMI, the DRA driver with the serving stack.
- A small system node group (untainted) runs CoreDNS and the stack's
  controllers; every pool is a GPU node group whose nodes EKS labels
  `modelplane.ai/pool=<pool>` and taints with its class's taints and, unless the
  class declares that key, `nvidia.com/gpu=true:NoSchedule` (`taints`).
- A fixed-size pool (minNodes == maxNodes) has its size in `forProvider`, so an
  edit resizes it; an autoscaled pool has its desired size in `initProvider`
  only, so the provider never fights the autoscaler over it, except to move the
  size into new bounds EKS would otherwise refuse (`_pool`). The Cluster
  Autoscaler (`eks_autoscaler`) grows and shrinks it; from zero only when its
  class claims no device through DRA (`pool_issues` refuses `minNodes: 0` then).
"""

from collections.abc import Mapping
from typing import Any, Final

from modelplane_models.inference_class import CapacityType
from modelplane_models.inference_cluster import EKSCluster

from modelplane.core.issues import Issue
from modelplane.core.observed import as_map, at_provider, reported_count
from modelplane.core.vocabulary import LABEL_POOL, Reason

from .aws import EKS, IAM, MANAGED_BY_TAG, trust_policy
from .cloud import CloudProvisioner
from .eks_autoscaler import compose_autoscaler
from .eks_network import compose_network
from .model import SYSTEM_POOL, ClusterPlan, Composed, Manifest, PoolPlan, body, ref
from .names import cloud_name
from .taints import cloud_taints

# The value of the GPU taint of a node group (`nvidia.com/gpu=true:NoSchedule`).
GPU_TAINT_VALUE: Final = "true"
# An EKS node group's taint key is at most 63 characters (the NodeGroup CRD's own
# description; a Kubernetes taint key may be a longer qualified name).
TAINT_KEY_LIMIT: Final = 63
CLUSTER_POLICIES: Final = ("AmazonEKSClusterPolicy",)
NODE_POLICIES: Final = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)
ADDONS: Final = ("vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent")
SYSTEM_INSTANCE_TYPE: Final = "m7i.large"
SYSTEM_NODES: Final = 2
# The class's capacityType as the EKS API writes it.
CAPACITY_TYPES: Final = {CapacityType.ON_DEMAND: "ON_DEMAND", CapacityType.SPOT: "SPOT"}
# Node group states in which its desired size is what runs (or is being rolled).
_SERVING_STATES: Final = frozenset({"ACTIVE", "UPDATING"})


def _policy_arn(name: str) -> str:
    return f"arn:aws:iam::aws:policy/{name}"


class EksProvisioner(CloudProvisioner[EKSCluster]):
    source = "EKS"
    block_field = "eks"
    pool_resource = "nodegroup"

    def pool_issues(self, path: str, pool: PoolPlan) -> list[Issue]:
        long = [taint.key for taint in pool.class_taints if len(taint.key) > TAINT_KEY_LIMIT]
        if long:
            return [
                Issue(
                    f"{path}.className",
                    f"InferenceClass {pool.class_name!r} declares the node taint {long[0]!r}; "
                    f"an EKS node group's taint keys are at most {TAINT_KEY_LIMIT} characters",
                    Reason.CLASS_NOT_PROVISIONABLE,
                )
            ]
        eks = pool.provisioning.eks
        ami = str(eks.amiType) if eks is not None and eks.amiType is not None else ""
        if pool.nvidia_dra and ami.startswith("BOTTLEROCKET_"):
            # Bottlerocket's NVIDIA variants run NVIDIA's device plugin on every node,
            # which the NVIDIA DRA driver must not run beside (its chart says so), and
            # Modelplane composes no launch template or settings that turn it off.
            return [
                Issue(
                    f"{path}.className",
                    f"InferenceClass {pool.class_name!r} claims NVIDIA GPUs through DRA on "
                    f"spec.provisioning.eks.amiType {ami!r}, whose nodes run NVIDIA's device "
                    "plugin, which the DRA driver cannot run beside: use an AL2023 NVIDIA AMI",
                    Reason.CLASS_NOT_PROVISIONABLE,
                )
            ]
        if pool.autoscaled and pool.min_nodes < 1 and pool.dra:
            # The Cluster Autoscaler's AWS provider builds a group's template node without
            # ResourceSlices, so a DRA claim never fits it: a group at zero never grows,
            # and its replicas would wait forever. With a node, the node is the template.
            return [
                Issue(
                    f"{path}.minNodes",
                    f"must be at least 1: InferenceClass {pool.class_name!r} claims devices "
                    "through DRA, and the Cluster Autoscaler cannot grow such an EKS node "
                    "group from zero nodes",
                )
            ]
        return []

    def compose(self, plan: ClusterPlan) -> Composed:
        block, provider = self.planned(plan)
        region = block.region
        name, namespace = plan.name, plan.namespace
        out = Composed(connection_secret=self.connection_secret(name, namespace))
        tags = {MANAGED_BY_TAG: name}

        def put(key: str, manifest: dict[str, Any]) -> None:
            out.resources[self.key_prefix + key] = manifest

        cluster_name = cloud_name(name, "", 100)
        subnets: dict[str, Any]
        if block.network is not None:
            subnets = {"subnetIds": [subnet.root for subnet in block.network.subnetIds]}
        else:
            zones = [z.root for z in block.zones] if block.zones else [f"{region}a", f"{region}b"]
            network = compose_network(name, cluster_name, namespace, region, zones, provider)
            for key, manifest in network.resources.items():
                put(f"network-{key}", manifest)
            # The whole network outlives the cluster: a subnet the cluster's load
            # balancers or the NAT gateway sit in cannot go first.
            out.network = tuple(
                f"{self.key_prefix}network-{key}" for key in sorted(network.resources)
            )
            subnets = {"subnetIdRefs": [ref(subnet) for subnet in network.private_subnets]}
            # AWS fails a NAT gateway created in a VPC with no internet gateway attached
            # yet, and deletes it only about an hour later: the private subnets (the
            # nodes') would have no way out meanwhile, so node groups fail to create.
            out.after[f"{self.key_prefix}network-nat-gateway"] = (
                f"{self.key_prefix}network-internet-gateway",
            )

        roles = {"cluster": "eks.amazonaws.com", "node": "ec2.amazonaws.com"}
        policies = {"cluster": CLUSTER_POLICIES, "node": NODE_POLICIES}
        role_names: dict[str, str] = {}
        identities: list[str] = []
        for role, service in roles.items():
            role_name = role_names[role] = cloud_name(name, role, 64)
            identities.append(f"role-{role}")
            identities += [f"role-{role}-{policy.lower()}" for policy in policies[role]]
            put(
                f"role-{role}",
                body(
                    IAM,
                    "Role",
                    role_name,
                    namespace,
                    provider,
                    {"assumeRolePolicy": trust_policy(service), "tags": tags},
                ),
            )
            for policy in policies[role]:
                put(
                    f"role-{role}-{policy.lower()}",
                    body(
                        IAM,
                        "RolePolicyAttachment",
                        cloud_name(name, f"{role}-{policy.lower().replace('_', '-')}"),
                        namespace,
                        provider,
                        {"policyArn": _policy_arn(policy), "roleRef": ref(role_name)},
                    ),
                )

        put(
            "cluster",  # `cluster_key`
            body(
                EKS,
                "Cluster",
                cluster_name,
                namespace,
                provider,
                {
                    "region": region,
                    "version": plan.version,
                    "roleArnRef": ref(role_names["cluster"]),
                    "vpcConfig": {
                        **subnets,
                        "endpointPrivateAccess": True,
                        "endpointPublicAccess": True,
                    },
                    "accessConfig": {
                        "authenticationMode": "API",
                        "bootstrapClusterCreatorAdminPermissions": True,
                    },
                    "tags": tags,
                },
            ),
        )
        out.cluster = self.cluster_key()
        out.connection = self.key_prefix + "cluster-auth"
        out.identities = tuple(self.key_prefix + key for key in identities)
        on_cluster = {"region": region, "clusterNameRef": ref(cluster_name)}
        put(
            "cluster-auth",
            body(
                EKS,
                "ClusterAuth",
                cluster_name,
                namespace,
                provider,
                dict(on_cluster),
                writeConnectionSecretToRef={"name": out.connection_secret["name"]},
            ),
        )
        for addon in ADDONS:
            put(
                f"addon-{addon}",
                body(
                    EKS,
                    "Addon",
                    cloud_name(name, addon),
                    namespace,
                    provider,
                    {**on_cluster, "addonName": addon, "tags": tags},
                ),
            )
        for key, manifest in compose_autoscaler(
            name, cluster_name, namespace, region, provider
        ).items():
            put(key, manifest)
        release = self.key_prefix + "autoscaler-release"
        out.inside = (release,)
        # EKS Pod Identity gives a pod its credentials when the pod is admitted: an
        # autoscaler started before its association exists never gets them. And its
        # pod needs a node: installed (with `wait`) before the system group has one,
        # the release would time out while EKS is still bringing the group up.
        out.after[release] = (
            self.key_prefix + "autoscaler-pod-identity",
            self.pool_key(SYSTEM_POOL),
        )
        node_group: dict[str, Any] = {
            **on_cluster,
            "nodeRoleArnRef": ref(role_names["node"]),
            **subnets,
            "version": plan.version,
            "tags": tags,
        }
        self.put_system_pool(
            plan,
            out,
            body(
                EKS,
                "NodeGroup",
                cloud_name(name, SYSTEM_POOL),
                namespace,
                provider,
                {
                    **node_group,
                    "instanceTypes": [SYSTEM_INSTANCE_TYPE],
                    "amiType": "AL2023_x86_64_STANDARD",
                    "scalingConfig": {
                        "minSize": SYSTEM_NODES,
                        "maxSize": SYSTEM_NODES,
                        "desiredSize": SYSTEM_NODES,
                    },
                },
            ),
        )
        self.put_pools(
            plan, out, plan.pools, lambda pool: self._pool(plan, provider, node_group, pool)
        )
        return out

    def _pool(
        self,
        plan: ClusterPlan,
        provider: dict[str, str],
        node_group: Manifest,
        pool: PoolPlan,
    ) -> Manifest:
        eks = pool.provisioning.eks
        assert eks is not None  # check_pools plans only pools whose class has the block
        scaling: dict[str, Any] = {"minSize": pool.min_nodes, "maxSize": pool.max_nodes}
        for_provider: dict[str, Any] = {
            **node_group,
            "instanceTypes": [eks.instanceType],
            "amiType": str(eks.amiType or "AL2023_x86_64_NVIDIA"),
            "capacityType": CAPACITY_TYPES[
                CapacityType(eks.capacityType or CapacityType.ON_DEMAND)
            ],
            "diskSize": eks.diskSizeGb or 200,
            "labels": {LABEL_POOL: pool.name},
            "taint": cloud_taints(pool.node_taints, GPU_TAINT_VALUE),
            "scalingConfig": scaling,
        }
        spec: dict[str, Any] = {}
        if pool.autoscaled:
            spec["initProvider"] = {"scalingConfig": {"desiredSize": pool.desired}}
            current = _reported_size(plan.observed.get(self.pool_key(pool.name)))
            if current is not None and not pool.min_nodes <= current <= pool.max_nodes:
                # EKS refuses bounds that leave the group's size outside them
                # (UpdateNodegroupConfig: "Minimum capacity 4 can't be greater than
                # desired size 2"), and the provider sends the size it last read while
                # desiredSize is only in initProvider. Sent in forProvider, clamped, the
                # size moves with the bounds; once the cloud reports it inside them it is
                # left out again (upjet ignores an initProvider field forProvider lacks),
                # so the autoscaler owns it as before.
                scaling["desiredSize"] = min(max(current, pool.min_nodes), pool.max_nodes)
        else:
            scaling["desiredSize"] = pool.desired
        return body(
            EKS,
            "NodeGroup",
            cloud_name(plan.name, pool.name),
            plan.namespace,
            provider,
            for_provider,
            **spec,
        )

    def ready_nodes(self, observed: Mapping[str, Any]) -> int | None:
        at = at_provider(observed)
        if not at:
            return None
        state = at.get("status")
        if not isinstance(state, str) or state not in _SERVING_STATES:
            return 0
        # EKS reports no count of Ready nodes: the group's desired size is the figure.
        # A size that is no count (only an edited world has one) reports nothing.
        size = as_map(at.get("scalingConfig")).get("desiredSize")
        return 0 if size is None else reported_count(size)


def _reported_size(observed: Mapping[str, Any] | None) -> int | None:
    """The desired size EKS reports for a node group, None before it reports one (or
    when what it reports is no count)."""
    size = as_map(at_provider(observed or {}).get("scalingConfig")).get("desiredSize")
    return None if size is None else reported_count(size)
