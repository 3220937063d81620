"""The Kubernetes Cluster Autoscaler of an EKS cluster Modelplane creates.

EKS managed node groups do not grow by themselves: something in the cluster must
see Pending pods and raise a group's desired size. That is the Cluster
Autoscaler's AWS provider, which finds the node groups by the
`k8s.io/cluster-autoscaler/<cluster>` tags EKS puts on their Auto Scaling groups
and learns a group's labels and taints from `eks:DescribeNodegroup`, so a group
at zero nodes can still be chosen (scale from zero), unless its pods claim
devices through DRA: it runs with DRA on (Modelplane's GPU replicas claim their
GPUs so), and the AWS provider's template for a group with no node has no
ResourceSlices, so such a group needs a node to grow from (`minNodes` >= 1,
checked by `EksProvisioner.pool_issues`).

It runs in `kube-system` as the service account `cluster-autoscaler`, with an
IAM role it gets through EKS Pod Identity (the agent is one of the cluster's
add-ons): the role may read Auto Scaling, EC2 and EKS, and resize or shrink only
the groups tagged as this cluster's. It is installed through provider-helm,
from the project's chart at a pinned version.
"""

from typing import Any, Final

from modelplane.core.charts import RELEASE_API_VERSION, RELEASE_ROLLBACK_LIMIT, Chart
from modelplane.core.naming import HELM_RELEASE_MAX, fitted

from .aws import EKS, IAM, policy_document, trust_policy
from .model import Manifest, body, ref
from .names import cloud_name

CHART: Final = Chart("cluster-autoscaler", repository="https://kubernetes.github.io/autoscaler")
CHART_VERSION: Final = "9.52.1"
NAMESPACE: Final = "kube-system"
SERVICE_ACCOUNT: Final = "cluster-autoscaler"
_READ: Final = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "autoscaling:DescribeTags",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
    "eks:DescribeNodegroup",
)
_DRA_RESOURCES: Final = ("deviceclasses", "resourceclaims", "resourceslices")
_RESIZE: Final = (
    "autoscaling:SetDesiredCapacity",
    "autoscaling:TerminateInstanceInAutoScalingGroup",
)


def compose_autoscaler(
    cluster: str,
    cluster_name: str,
    namespace: str,
    region: str,
    provider: dict[str, str],
) -> dict[str, Manifest]:
    """The autoscaler's IAM, its Pod Identity association and its Helm release, by key.

    `cluster` names the InferenceCluster (and the provider-helm ClusterProviderConfig
    that reaches it), `cluster_name` the EKS cluster.
    """
    name = cloud_name(cluster, "autoscaler", 64)
    policy = policy_document(
        {"Effect": "Allow", "Action": list(_READ), "Resource": "*"},
        {
            "Effect": "Allow",
            "Action": list(_RESIZE),
            "Resource": "*",
            "Condition": {
                "StringEquals": {
                    f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"
                }
            },
        },
    )
    out: dict[str, Manifest] = {
        "autoscaler-policy": body(IAM, "Policy", name, namespace, provider, {"policy": policy}),
        "autoscaler-role": body(
            IAM,
            "Role",
            name,
            namespace,
            provider,
            {
                "assumeRolePolicy": trust_policy(
                    "pods.eks.amazonaws.com", "sts:AssumeRole", "sts:TagSession"
                )
            },
        ),
        "autoscaler-role-policy": body(
            IAM,
            "RolePolicyAttachment",
            name,
            namespace,
            provider,
            {"policyArnRef": ref(name), "roleRef": ref(name)},
        ),
        "autoscaler-pod-identity": body(
            EKS,
            "PodIdentityAssociation",
            name,
            namespace,
            provider,
            {
                "region": region,
                "clusterNameRef": ref(cluster_name),
                "namespace": NAMESPACE,
                "serviceAccount": SERVICE_ACCOUNT,
                "roleArnRef": ref(name),
            },
        ),
    }
    # provider-helm installs under `metadata.name`, and Helm refuses a release name
    # past 53 characters; a name that fits is kept as it was, so no release is renamed.
    release = fitted(cloud_name(cluster, "cluster-autoscaler", 253), HELM_RELEASE_MAX)
    values: dict[str, Any] = {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster_name},
        "rbac": {
            "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
            # The chart's ClusterRole has no resource.k8s.io rule; the autoscaler's DRA
            # simulation lists and watches these three.
            "additionalRules": [
                {
                    "apiGroups": ["resource.k8s.io"],
                    "resources": list(_DRA_RESOURCES),
                    "verbs": ["get", "list", "watch"],
                }
            ],
        },
        "extraArgs": {
            # Spread a pool's scale-ups over its zones' groups.
            "balance-similar-node-groups": True,
            # Every GPU replica claims its GPUs through DRA; without this the autoscaler
            # ignores claims, packs every pending replica onto one new node by CPU and
            # memory, and drains GPU nodes it reads as idle.
            "enable-dynamic-resource-allocation": True,
        },
    }
    out["autoscaler-release"] = {
        "apiVersion": RELEASE_API_VERSION,
        "kind": "Release",
        "metadata": {
            "name": release,
            "namespace": namespace,
        },
        "spec": {
            "forProvider": {
                "chart": CHART.for_provider(CHART_VERSION),
                "namespace": NAMESPACE,
                "wait": True,
                "values": values,
            },
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": cluster},
            "rollbackLimit": RELEASE_ROLLBACK_LIMIT,
        },
    }
    return out
