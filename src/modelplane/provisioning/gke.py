"""GKE: a cluster, its network unless given, a node service account, one node pool per pool.

- Network: a custom-mode VPC network and one subnetwork in the cluster's region
  with secondary ranges for pods and services (a VPC-native cluster).
- IAM: a node service account with the roles nodes need to log, report metrics
  and pull images (and nothing else: the default compute account is an editor).
- The cluster drops GKE's default node pool (`removeDefaultNodePool`), has
  Workload Identity on, and writes its kubeconfig connection Secret for the
  provider-kubernetes and provider-helm ProviderConfigs. `deletionProtection`
  is off: deleting the InferenceCluster is how a platform deletes it.
- A small system pool (untainted) runs kube-system and the stack's controllers.
- Each pool: its class's machine type and accelerators, the label
  `modelplane.ai/pool=<pool>`, its class's taints and, unless the class declares
  that key, GKE's GPU taint `nvidia.com/gpu=present:NoSchedule` (`taints`: GKE adds
  it itself only to a pool created after a non-GPU one), spot when the class says,
  and GKE's own autoscaler kept between minNodes and maxNodes in total
  (`totalMinNodeCount`, `totalMaxNodeCount`; a fixed pool has both equal).
  `initialNodeCount` is per zone and immutable, so it is set once (`initProvider`).
  A pool whose class declares NVIDIA DRA devices is set up for DRA and gets its
  driver from Modelplane's installer (`gke_gpu`); any other GPU pool has GKE install
  the driver the class names.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from modelplane_models.inference_class import CapacityType, GpuDriverVersion
from modelplane_models.inference_cluster import GKECluster

from modelplane.core.issues import Issue
from modelplane.core.observed import as_map, at_provider, reported_count
from modelplane.core.vocabulary import LABEL_POOL, Reason

from .cloud import CloudProvisioner
from .gke_gpu import (
    DRA_DRIVER_VALUES,
    dra_node_config,
    driver_version,
    installers,
)
from .model import SYSTEM_POOL, ClusterPlan, Composed, Manifest, PoolPlan, body, ref
from .names import cloud_name
from .taints import cloud_taints

COMPUTE: Final = "compute.gcp.m.upbound.io/v1beta1"
CONTAINER: Final = "container.gcp.m.upbound.io/v1beta1"
CLOUD_PLATFORM: Final = "cloudplatform.gcp.m.upbound.io/v1beta1"
NODE_ROLES: Final = (
    "roles/artifactregistry.reader",
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
)
NODE_CIDR: Final = "10.0.0.0/20"
POD_RANGE: Final = ("pods", "10.4.0.0/14")
SERVICE_RANGE: Final = ("services", "10.8.0.0/20")
SYSTEM_MACHINE_TYPE: Final = "e2-standard-4"
# The zones GKE spreads a regional cluster's pools over when none are named.
REGIONAL_ZONES: Final = 3
SCOPES: Final = ("https://www.googleapis.com/auth/cloud-platform",)
# The value of the taint GKE puts on GPU nodes (`nvidia.com/gpu=present:NoSchedule`),
# which Google's own GPU manifests tolerate with `Equal`.
GPU_TAINT_VALUE: Final = "present"


def _is_zone(location: str) -> bool:
    """`us-central1-a` is a zone, `us-central1` a region."""
    return location.count("-") >= 2


def _region(location: str) -> str:
    return location.rsplit("-", 1)[0] if _is_zone(location) else location


def _per_zone(total: int, zones: int) -> int:
    return -(-total // zones)


class GkeProvisioner(CloudProvisioner[GKECluster]):
    source = "GKE"
    block_field = "gke"
    pool_resource = "nodepool"
    version_field = "minMasterVersion"
    # What the control plane runs (`1.34.1-gke.1200`), auto-upgrades included.
    running_version_field = "masterVersion"

    def pool_issues(self, path: str, pool: PoolPlan) -> list[Issue]:
        gke = pool.provisioning.gke
        if gke is not None and gke.accelerator is None:
            return [
                Issue(
                    f"{path}.className",
                    f"InferenceClass {pool.class_name!r} has no spec.provisioning.gke.accelerator; "
                    "GKE attaches and installs drivers for the accelerators it names",
                    Reason.CLASS_NOT_PROVISIONABLE,
                )
            ]
        return []

    def compose(self, plan: ClusterPlan) -> Composed:
        block, provider = self.planned(plan)
        name, namespace, project = plan.name, plan.namespace, block.project
        out = Composed(connection_secret=self.connection_secret(name, namespace))

        def put(key: str, manifest: Manifest) -> None:
            out.resources[self.key_prefix + key] = manifest

        network: dict[str, Any]
        if block.network is not None:
            network = {
                "network": block.network.network,
                "subnetwork": block.network.subnetwork,
                "ipAllocationPolicy": {},
            }
        else:
            network_name = cloud_name(name, "", 63)
            put(
                "network",
                body(
                    COMPUTE,
                    "Network",
                    network_name,
                    namespace,
                    provider,
                    {"project": project, "autoCreateSubnetworks": False, "routingMode": "REGIONAL"},
                ),
            )
            put(
                "subnetwork",
                body(
                    COMPUTE,
                    "Subnetwork",
                    network_name,
                    namespace,
                    provider,
                    {
                        "project": project,
                        "region": _region(block.location),
                        "networkRef": ref(network_name),
                        "ipCidrRange": NODE_CIDR,
                        "privateIpGoogleAccess": True,
                        "secondaryIpRange": [
                            {"rangeName": POD_RANGE[0], "ipCidrRange": POD_RANGE[1]},
                            {"rangeName": SERVICE_RANGE[0], "ipCidrRange": SERVICE_RANGE[1]},
                        ],
                    },
                ),
            )
            out.network = (self.key_prefix + "network", self.key_prefix + "subnetwork")
            network = {
                "networkRef": ref(network_name),
                "subnetworkRef": ref(network_name),
                "ipAllocationPolicy": {
                    "clusterSecondaryRangeName": POD_RANGE[0],
                    "servicesSecondaryRangeName": SERVICE_RANGE[0],
                },
            }

        account = cloud_name(name, "nodes", 30)
        email = f"{account}@{project}.iam.gserviceaccount.com"
        put(
            "node-service-account",
            body(
                CLOUD_PLATFORM,
                "ServiceAccount",
                account,
                namespace,
                provider,
                {"project": project, "displayName": f"Modelplane nodes of {name}"},
            ),
        )
        for role in NODE_ROLES:
            put(
                f"node-role-{role.removeprefix('roles/').lower()}",
                body(
                    CLOUD_PLATFORM,
                    "ProjectIAMMember",
                    cloud_name(
                        name, f"nodes-{role.removeprefix('roles/').replace('.', '-').lower()}"
                    ),
                    namespace,
                    provider,
                    {"project": project, "role": role, "member": f"serviceAccount:{email}"},
                ),
            )

        cluster_name = cloud_name(name, "", 40)
        put(
            "cluster",  # `cluster_key`
            body(
                CONTAINER,
                "Cluster",
                cluster_name,
                namespace,
                provider,
                {
                    "project": project,
                    "location": block.location,
                    "minMasterVersion": plan.version,
                    "removeDefaultNodePool": True,
                    "initialNodeCount": 1,
                    "deletionProtection": False,
                    "workloadIdentityConfig": {"workloadPool": f"{project}.svc.id.goog"},
                    "resourceLabels": {"modelplane-cluster": cluster_name},
                    **network,
                },
                writeConnectionSecretToRef={"name": out.connection_secret["name"]},
            ),
        )
        out.cluster = out.connection = self.cluster_key()
        zones = [zone.root for zone in block.zones] if block.zones else []
        zone_count = len(zones) or (1 if _is_zone(block.location) else REGIONAL_ZONES)
        pool_base: dict[str, Any] = {
            "project": project,
            "location": block.location,
            "clusterRef": ref(cluster_name),
            # No `version`: auto-upgrade keeps nodes at the control plane's, and
            # setting both makes them fight (the GKE provider's own advice).
            "management": {"autoRepair": True, "autoUpgrade": True},
        }
        if zones:
            pool_base["nodeLocations"] = zones
        node_base: dict[str, Any] = {
            "serviceAccountRef": ref(account),
            "oauthScopes": list(SCOPES),
            "workloadMetadataConfig": {"mode": "GKE_METADATA"},
        }
        self.put_system_pool(
            plan,
            out,
            body(
                CONTAINER,
                "NodePool",
                cloud_name(name, SYSTEM_POOL, 40),
                namespace,
                provider,
                {
                    **pool_base,
                    "autoscaling": {"totalMinNodeCount": 1, "totalMaxNodeCount": 3},
                    "nodeConfig": {**node_base, "machineType": SYSTEM_MACHINE_TYPE},
                },
                initProvider={"initialNodeCount": 1},
            ),
        )
        self.put_pools(
            plan,
            out,
            plan.pools,
            lambda pool: self._pool(plan, provider, pool_base, node_base, pool, zone_count),
        )
        out.objects = {
            self.key_prefix + key: installer
            for key, installer in installers(name, plan.pools, plan.kept_pools).items()
        }
        # Whoever installed it, a GKE node's driver is in GKE's directory.
        out.stack_values = {key: dict(values) for key, values in DRA_DRIVER_VALUES.items()}
        return out

    def _pool(
        self,
        plan: ClusterPlan,
        provider: dict[str, str],
        pool_base: dict[str, Any],
        node_base: dict[str, Any],
        pool: PoolPlan,
        zones: int,
    ) -> Manifest:
        gke = pool.provisioning.gke
        assert gke is not None and gke.accelerator is not None  # pool_issues holds the rest
        # GKE's own driver installation does not work with DRA: a DRA pool's driver
        # comes from Modelplane's installer (or the platform's).
        installs = (
            GpuDriverVersion.INSTALLATION_DISABLED if pool.nvidia_dra else driver_version(pool)
        )
        accelerator = {
            "type": gke.accelerator.type,
            "count": gke.accelerator.count,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": installs.value},
        }
        node_config: dict[str, Any] = {
            **node_base,
            "machineType": gke.machineType,
            "guestAccelerator": [accelerator],
            "diskSizeGb": gke.diskSizeGb or 200,
            "labels": {LABEL_POOL: pool.name},
            "taint": cloud_taints(pool.node_taints, GPU_TAINT_VALUE),
        }
        if pool.nvidia_dra:
            dra = dra_node_config(pool)
            node_config["imageType"] = dra["imageType"]
            node_config["labels"] |= dra["labels"]
        if gke.capacityType == CapacityType.SPOT:
            node_config["spot"] = True
        return body(
            CONTAINER,
            "NodePool",
            cloud_name(plan.name, pool.name, 40),
            plan.namespace,
            provider,
            {
                **pool_base,
                "autoscaling": {
                    "totalMinNodeCount": pool.min_nodes,
                    "totalMaxNodeCount": pool.max_nodes,
                    "locationPolicy": "ANY",
                },
                "nodeConfig": node_config,
            },
            initProvider={"initialNodeCount": _per_zone(pool.desired, zones)},
        )

    def ready_nodes(self, observed: Mapping[str, Any]) -> int | None:
        at = at_provider(observed)
        if not at:
            return None
        # A field that is no count or list (only an edited world has one) reports
        # nothing rather than fail the whole cluster's composition.
        reported = at.get("nodeCount")
        per_zone = 0 if reported is None else reported_count(reported)
        if per_zone is None:
            return None
        groups = at.get("managedInstanceGroupUrls") or at.get("instanceGroupUrls") or ()
        if not isinstance(groups, Sequence) or isinstance(groups, str):
            return None
        # The GCP provider's nodeCount is its managed instance groups' target size (what
        # GKE is bringing up, not nodes Ready), summed and divided by the groups with
        # integer division (terraform-provider-google flattenNodePool): a pool spread
        # unevenly over its zones (locationPolicy ANY) reads low by the remainder, 3
        # nodes over 2 zones as 2 and 1 as 0. Its total limit bounds it all the same.
        nodes = per_zone * max(1, len(cast(Sequence[Any], groups)))
        limit = reported_count(as_map(at.get("autoscaling")).get("totalMaxNodeCount"))
        return nodes if limit is None else min(nodes, limit)
