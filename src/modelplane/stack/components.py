"""The serving stack's own components: what a Managed stack installs besides the scheduler.

Each is a `Component` (its `spec.stack.versions` key, pinned version and Helm
releases); the in-cluster schedulers' live in their modules
(`modelplane.conventions.schedulers`). The pins are the upstream releases the
rest of Modelplane is checked against (the CRDs in `../shared/crds`).
"""

from collections.abc import Mapping
from typing import Any, Final, cast

from modelplane.conventions.schedulers import SCHEDULERS
from modelplane.core.charts import Chart, Component, ReleaseSpec
from modelplane.core.vocabulary import CLUSTER_DOMAIN

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
# Where KServe and the Envoy projects publish their charts, each project's releases
# from one registry.
KSERVE_CHARTS: Final = "oci://ghcr.io/kserve/charts"
ENVOY_CHARTS: Final = "oci://docker.io/envoyproxy"
KSERVE_NAMESPACE: Final = "kserve"
# The release of KServe's LLMInferenceService controller, which its replicas need.
KSERVE_RELEASE: Final = "kserve-llmisvc"
KSERVE: Final = Component(
    key="kserve",
    title="KServe LLMInferenceService",
    version="v0.20.0",
    releases=(
        ReleaseSpec(
            "kserve-llmisvc-crd",
            Chart("kserve-llmisvc-crd", repository=KSERVE_CHARTS),
            namespace=KSERVE_NAMESPACE,
        ),
        ReleaseSpec(
            KSERVE_RELEASE,
            Chart("kserve-llmisvc-resources", repository=KSERVE_CHARTS),
            namespace=KSERVE_NAMESPACE,
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
            Chart("kserve-runtime-configs", repository=KSERVE_CHARTS),
            namespace=KSERVE_NAMESPACE,
            values={
                "kserve": {
                    "llmisvcConfigs": {"enabled": True},
                    "servingruntime": {"enabled": False},
                }
            },
        ),
    ),
)
ENVOY_GATEWAY_NAMESPACE: Final = "envoy-gateway-system"
ENVOY_GATEWAY_RELEASE: Final = "envoy-gateway"
ENVOY_GATEWAY: Final = Component(
    key="envoyGateway",
    title="Envoy Gateway",
    version="v1.8.1",
    releases=(
        ReleaseSpec(
            ENVOY_GATEWAY_RELEASE,
            Chart("gateway-helm", repository=ENVOY_CHARTS),
            namespace=ENVOY_GATEWAY_NAMESPACE,
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

# Envoy Gateway routes to no InferencePool by itself: v1.8.1 refuses a backendRef of
# any other group than its own and the core one (`ResolvedRefs=False`, `InvalidKind`).
# Envoy AI Gateway's controller is the extension server that translates InferencePool
# backends (an ext_proc filter to the pool's endpoint picker), so a cluster whose
# replicas are routed through its Gateway gets it. v1.1.0 is the newest release whose
# compatibility matrix lists Envoy Gateway v1.8.1 (and is built against it).
AI_GATEWAY_NAMESPACE: Final = "envoy-ai-gateway-system"
AI_GATEWAY_RELEASE: Final = "ai-gateway"
# The controller's Service (the chart names it by `controller.fullnameOverride`) and the
# port its extension server listens on (the chart's `grpc` service port).
AI_GATEWAY_SERVICE: Final = "ai-gateway-controller"
AI_GATEWAY_EXTENSION_PORT: Final = 1063
ENVOY_AI_GATEWAY: Final = Component(
    key="envoyAiGateway",
    title="Envoy AI Gateway",
    version="v1.1.0",
    releases=(
        ReleaseSpec(
            "ai-gateway-crds",
            Chart("ai-gateway-crds-helm", repository=ENVOY_CHARTS),
            namespace=AI_GATEWAY_NAMESPACE,
        ),
        ReleaseSpec(
            AI_GATEWAY_RELEASE,
            Chart("ai-gateway-helm", repository=ENVOY_CHARTS),
            namespace=AI_GATEWAY_NAMESPACE,
            # Said outright, not left to the chart's defaults: Envoy Gateway's extension
            # manager dials this Service by name, and the chart grants Envoy Gateway's
            # service account (in `envoyGateway.namespace`) the right to read
            # InferencePools, without which Envoy Gateway never reports ready.
            values={
                "controller": {"fullnameOverride": AI_GATEWAY_SERVICE},
                "envoyGateway": {"namespace": ENVOY_GATEWAY_NAMESPACE},
            },
        ),
    ),
)
# What the envoy-gateway release's values gain once Envoy AI Gateway runs: the extension
# manager of upstream's `manifests/envoy-gateway-values.yaml` with the InferencePool
# add-on (`examples/inference-pool/envoy-gateway-values-addon.yaml`), at v1.1.0. Its
# hooks hand every translated listener, route, cluster and secret to the extension
# server after translation; InferencePool becomes a backend kind Envoy Gateway accepts
# and leaves to it. EnvoyPatchPolicy, which upstream's file also turns on as
# recommended but not required, stays off: it lets whoever may write one inject
# arbitrary proxy configuration, and no InferencePool route needs it.
INFERENCE_POOL_EXTENSION: Final[Mapping[str, Any]] = {
    "config": {
        "envoyGateway": {
            "extensionManager": {
                "backendResources": [
                    {
                        "group": "inference.networking.k8s.io",
                        "kind": "InferencePool",
                        "version": "v1",
                    }
                ],
                "hooks": {
                    "xdsTranslator": {
                        "translation": {
                            part: {"includeAll": True}
                            for part in ("listener", "route", "cluster", "secret")
                        },
                        "post": ["Translation", "Cluster", "Route"],
                    }
                },
                "service": {
                    "fqdn": {
                        "hostname": f"{AI_GATEWAY_SERVICE}.{AI_GATEWAY_NAMESPACE}.{CLUSTER_DOMAIN}",
                        "port": AI_GATEWAY_EXTENSION_PORT,
                    }
                },
            }
        }
    }
}


def calls_extension(values: Mapping[str, Any]) -> bool:
    """Whether envoy-gateway release values configure an extension manager."""
    config = values.get("config")
    if not isinstance(config, Mapping):
        return False
    gateway = cast(Mapping[str, Any], config).get("envoyGateway")
    return isinstance(gateway, Mapping) and "extensionManager" in cast(Mapping[str, Any], gateway)


STACK_COMPONENTS: Final = (
    NODE_FEATURE_DISCOVERY,
    NVIDIA_DRA_DRIVER,
    LEADER_WORKER_SET,
    CERT_MANAGER,
    KSERVE,
    ENVOY_GATEWAY,
    ENVOY_AI_GATEWAY,
)


def all_components() -> Mapping[str, Component]:
    """Every component a `spec.stack.versions` key may name, by key: the stack's own and
    every scheduler's."""
    found = {c.key: c for c in STACK_COMPONENTS}
    for scheduler in SCHEDULERS.values():
        if scheduler.install is not None:
            found[scheduler.install.key] = scheduler.install
    return dict(sorted(found.items()))
