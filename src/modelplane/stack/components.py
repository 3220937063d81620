"""The serving stack's own components: what a Managed stack installs besides the scheduler.

Each is a `Component` (its `spec.stack.versions` key, pinned version and Helm
releases); the in-cluster schedulers' live in their modules
(`modelplane.conventions.schedulers`). The pins are the upstream releases the
rest of Modelplane is checked against (the CRDs in `../shared/crds`).
"""

from collections.abc import Mapping
from typing import Final

from modelplane.conventions.schedulers import SCHEDULERS
from modelplane.core.charts import Chart, Component, ReleaseSpec

NODE_FEATURE_DISCOVERY: Final = Component.helm(
    key="nodeFeatureDiscovery",
    title="Node Feature Discovery",
    version="0.18.3",
    chart=Chart(
        "node-feature-discovery",
        repository="https://kubernetes-sigs.github.io/node-feature-discovery/charts",
    ),
)
NVIDIA_DRA_DRIVER: Final = Component.helm(
    key="nvidiaDraDriver",
    title="NVIDIA DRA driver for GPUs",
    version="25.12.0",
    chart=Chart("nvidia-dra-driver-gpu", repository="https://helm.ngc.nvidia.com/nvidia"),
    # GPU allocation through DRA (the gpu.nvidia.com DeviceClass); Modelplane
    # claims no ComputeDomains.
    values={
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "gpuResourcesEnabledOverride": True,
    },
)
# Where each chart takes the tolerations of the DaemonSet it runs on every GPU node:
# Node Feature Discovery's worker labels the node (`worker.tolerations`), the DRA
# driver's kubelet plugin publishes its GPUs (`kubeletPlugin.tolerations`). Both
# default to none, and a DaemonSet tolerates no custom taint by itself, so on GPU
# nodes tainted as their pools publish (their classes' taints; on a cluster
# Modelplane creates, nvidia.com/gpu too) neither would run and no GPU would ever
# be published.
GPU_NODE_TOLERATIONS: Final[Mapping[str, tuple[str, str]]] = {
    NODE_FEATURE_DISCOVERY.key: ("worker", "tolerations"),
    NVIDIA_DRA_DRIVER.key: ("kubeletPlugin", "tolerations"),
}
LEADER_WORKER_SET: Final = Component.helm(
    key="leaderWorkerSet",
    title="LeaderWorkerSet",
    version="0.10.0",
    chart=Chart("lws", repository="oci://registry.k8s.io/lws/charts"),
    namespace="lws-system",
)
CERT_MANAGER: Final = Component.helm(
    key="certManager",
    title="cert-manager",
    version="v1.18.2",
    chart=Chart("cert-manager", repository="https://charts.jetstack.io"),
    values={"crds": {"enabled": True}},
)
KSERVE: Final = Component(
    key="kserve",
    title="KServe LLMInferenceService",
    version="v0.20.0",
    releases=(
        ReleaseSpec(
            "kserve-llmisvc-crd",
            Chart("kserve-llmisvc-crd", repository="oci://ghcr.io/kserve/charts"),
            namespace="kserve",
        ),
        ReleaseSpec(
            "kserve-llmisvc",
            Chart("kserve-llmisvc-resources", repository="oci://ghcr.io/kserve/charts"),
            namespace="kserve",
        ),
        # The LLMInferenceServiceConfig presets every LLMInferenceService is built
        # from (kserve-config-llm-template and the rest of the controller's
        # WellKnownDefaultConfigs): at v0.20 they ship only in this chart, off by
        # default, and without them each service stays PresetsCombined=False
        # (ConfigNotFound). Its ClusterServingRuntimes stay off, said outright: their
        # CRD is KServe's InferenceService stack, which the Managed stack does not install.
        # The presets go through the llmisvc controller's validating webhook, which may
        # not serve yet on the first try; provider-helm retries the install.
        ReleaseSpec(
            "kserve-llmisvc-configs",
            Chart("kserve-runtime-configs", repository="oci://ghcr.io/kserve/charts"),
            namespace="kserve",
            values={
                "kserve": {
                    "llmisvcConfigs": {"enabled": True},
                    "servingruntime": {"enabled": False},
                }
            },
        ),
    ),
)
ENVOY_GATEWAY: Final = Component(
    key="envoyGateway",
    title="Envoy Gateway",
    version="v1.8.1",
    releases=(
        ReleaseSpec(
            "envoy-gateway",
            Chart("gateway-helm", repository="oci://docker.io/envoyproxy"),
            namespace="envoy-gateway-system",
            # Envoy Gateway routes to no ExternalName Service, so a hub's routes reach
            # DNS-named backends through its Backend kind, which it serves only when
            # enabled (off by default: the chart's `config.envoyGateway` is merged into
            # the EnvoyGateway configuration it writes).
            values={"config": {"envoyGateway": {"extensionApis": {"enableBackend": True}}}},
        ),
    ),
)
# Envoy Gateway's GatewayClass controller: the `spec.controllerName` of a GatewayClass it
# serves (the platform creates the class; the traffic path reads it, `traffic.gateways`).
ENVOY_GATEWAY_CONTROLLER: Final = "gateway.envoyproxy.io/gatewayclass-controller"

STACK_COMPONENTS: Final = (
    NODE_FEATURE_DISCOVERY,
    NVIDIA_DRA_DRIVER,
    LEADER_WORKER_SET,
    CERT_MANAGER,
    KSERVE,
    ENVOY_GATEWAY,
)


def all_components() -> Mapping[str, Component]:
    """Every component a `spec.stack.versions` key may name, by key: the stack's own and
    every scheduler's."""
    found = {c.key: c for c in STACK_COMPONENTS}
    for scheduler in SCHEDULERS.values():
        if scheduler.install is not None:
            found[scheduler.install.key] = scheduler.install
    return dict(sorted(found.items()))
