"""GKE GPU node pools set up for DRA, and the NVIDIA driver Modelplane installs on them.

By default GKE installs a GPU node's NVIDIA driver itself and runs its own device
plugin there; GKE does not support either together with DRA (design/provisioning.md
cites its pages). A pool whose class declares DRA devices of NVIDIA's GPU driver
(`gpu.nvidia.com`) is therefore built as GKE documents for DRA:

- GKE's driver installation disabled (`gpuDriverInstallationConfig.gpuDriverVersion:
  INSTALLATION_DISABLED`), on Container-Optimized OS (`COS_CONTAINERD`, GKE's default
  image: the installer below is COS's, and it writes the driver to GKE's directory);
- node labels: `gke-no-default-nvidia-gpu-device-plugin=true` (GKE's device plugin
  stays off, so only the DRA driver hands the GPUs out), `nvidia.com/gpu.present=true`
  (a node the DRA driver's kubelet plugin selects before Node Feature Discovery has
  labelled it), `cloud.google.com/gke-nvidia-gpu-dra-driver=true` (GKE's autoscaler
  then knows a new node publishes DRA GPUs, so a pool at zero grows for a pending
  claim) and `modelplane.ai/nvidia-driver=<default|latest>` (which installer runs);
- the driver installed by a DaemonSet in `kube-system`, one per driver the pools ask
  for (the class's `gpuDriverVersion`, DEFAULT or LATEST; none for
  INSTALLATION_DISABLED, where the platform installs its own). It runs GKE's COS
  installer image, which GKE preloads on its nodes, only on GPU nodes GKE installs no
  driver on and whose label names its driver, tolerating every taint as GKE's own
  installer manifest does (a GPU node is tainted, and a drained one must keep its
  driver). GKE's MIG partitioning step is left out: GKE does not support MIG with DRA.

The serving stack's DRA driver then reads the driver from GKE's directory
(`nvidiaDriverRoot`), and its kubelet plugin runs without the `system-node-critical`
priority class, as GKE's DRA page installs it (`DRA_DRIVER_VALUES`).
"""

from typing import Any, Final

from modelplane_models.inference_class import GpuDriverVersion

from modelplane.core.vocabulary import LABEL_MANAGED_BY, LABEL_NVIDIA_DRIVER, MANAGED_BY
from modelplane.stack.components import NVIDIA_DRA_DRIVER

from .model import InClusterObject, Manifest, PoolPlan
from .names import cloud_name

# Where GKE's COS installer puts the driver on the host, and the stack reads it from.
DRIVER_DIR: Final = "/home/kubernetes/bin/nvidia"
IMAGE_TYPE: Final = "COS_CONTAINERD"
# The class's gpuDriverVersion Modelplane installs, by the node label value naming it.
DRIVERS: Final = {GpuDriverVersion.DEFAULT: "default", GpuDriverVersion.LATEST: "latest"}
DRA_NODE_LABELS: Final = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "nvidia.com/gpu.present": "true",
    "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
}
# The NVIDIA DRA driver chart's values on GKE's nodes, by its stack component key.
DRA_DRIVER_VALUES: Final[dict[str, Manifest]] = {
    NVIDIA_DRA_DRIVER.key: {
        "nvidiaDriverRoot": DRIVER_DIR,
        "kubeletPlugin": {"priorityClassName": ""},
    }
}
NAMESPACE: Final = "kube-system"
# GKE's installer image is preloaded on its COS GPU nodes under this tag, matching
# the node's image, so it is never pulled; the pause image keeps the pod running.
INSTALLER_IMAGE: Final = "cos-nvidia-installer:fixed"
PAUSE_IMAGE: Final = (
    "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
)
# Host paths the installer reads and writes, and where its container sees them.
_VOLUMES: Final = (
    ("dev", "/dev", "/dev"),
    ("driver", DRIVER_DIR, "/usr/local/nvidia"),
    ("vulkan-icd", f"{DRIVER_DIR}/vulkan/icd.d", "/etc/vulkan/icd.d"),
    ("root", "/", "/root"),
    ("cos-tools", "/var/lib/cos-tools", "/build/cos-tools"),
)
_ENV: Final = {
    "NVIDIA_INSTALL_DIR_HOST": DRIVER_DIR,
    "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
    "VULKAN_ICD_DIR_HOST": f"{DRIVER_DIR}/vulkan/icd.d",
    "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
    "ROOT_MOUNT_DIR": "/root",
    "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
    "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
}


def driver_version(pool: PoolPlan) -> GpuDriverVersion:
    """The class's gpuDriverVersion (DEFAULT when it names none)."""
    gke = pool.provisioning.gke
    return GpuDriverVersion((gke.gpuDriverVersion if gke else None) or GpuDriverVersion.DEFAULT)


def dra_node_config(pool: PoolPlan) -> dict[str, Any]:
    """What a DRA pool's `nodeConfig` sets beyond a GPU pool's: its image and labels."""
    labels = dict(DRA_NODE_LABELS)
    driver = DRIVERS.get(driver_version(pool))
    if driver is not None:
        labels[LABEL_NVIDIA_DRIVER] = driver
    return {"imageType": IMAGE_TYPE, "labels": labels}


def installers(
    cluster: str, pools: tuple[PoolPlan, ...], kept: tuple[str, ...]
) -> dict[str, InClusterObject]:
    """The driver installers the cluster's DRA pools need, by composition resource name
    (without the cloud's prefix). While a pool is kept (its class unread), every
    installer is composed: the pool may need any, and dropping one would leave that
    pool's new nodes without a driver."""
    wanted = {DRIVERS[v] for p in pools if p.nvidia_dra and (v := driver_version(p)) in DRIVERS}
    if kept:
        wanted = set(DRIVERS.values())
    out: dict[str, InClusterObject] = {}
    for driver in sorted(wanted):
        suffix = "" if driver == "default" else f"-{driver}"
        name = f"modelplane-nvidia-driver-installer{suffix}"
        out[f"nvidia-driver-installer{suffix}"] = InClusterObject(
            cloud_name(cluster, f"nvidia-driver-installer{suffix}", 253),
            _daemon_set(name, driver),
        )
    return out


def _install_script(driver: str) -> str:
    install = "/cos-gpu-installer install"
    if driver == "latest":
        # As GKE's installer manifest for the latest driver does: the directory the
        # installer leaves must be readable by the containers that use the driver.
        install += f" --version=latest\nchmod 755 /root{DRIVER_DIR}"
    # A node restarted with its driver loaded keeps it: installing over it fails.
    return (
        "set -e\n"
        "if lsmod | grep -q nvidia; then\n"
        '  echo "an NVIDIA driver is loaded already; nothing to install"\n'
        "  exit 0\n"
        "fi\n"
        f"{install}\n"
    )


def _daemon_set(name: str, driver: str) -> Manifest:
    labels = {"app.kubernetes.io/name": name, LABEL_MANAGED_BY: MANAGED_BY}
    node_term = {
        "matchExpressions": [
            {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
            # GKE sets this label where it installs the driver itself.
            {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
            {"key": LABEL_NVIDIA_DRIVER, "operator": "In", "values": [driver]},
        ]
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    # Admitted in kube-system on GKE; a node's driver comes first.
                    "priorityClassName": "system-node-critical",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [node_term]
                            }
                        }
                    },
                    "tolerations": [{"operator": "Exists"}],
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": [
                        {"name": volume, "hostPath": {"path": host}} for volume, host, _ in _VOLUMES
                    ],
                    "initContainers": [
                        {
                            "name": "install",
                            "image": INSTALLER_IMAGE,
                            "imagePullPolicy": "Never",
                            "command": ["bash", "-c", _install_script(driver)],
                            "env": [{"name": k, "value": v} for k, v in _ENV.items()],
                            "resources": {"requests": {"cpu": "150m"}},
                            "securityContext": {"privileged": True},
                            "volumeMounts": [
                                {"name": volume, "mountPath": path} for volume, _, path in _VOLUMES
                            ],
                        }
                    ],
                    "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
                },
            },
        },
    }
