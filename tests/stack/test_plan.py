"""Which releases a Managed stack installs, at which versions, in which order."""

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplane_models.inference_cluster import Stack

from modelplane.conventions.schedulers import SCHEDULERS, Kueue, Scheduler, Volcano
from modelplane.conventions.schedulers.kai import KAI
from modelplane.core.issues import Severity
from modelplane.core.node_taints import NodeTaint
from modelplane.stack import ClusterFacts, Mode, StackConfig, plan_releases, read_stack


def names(facts: ClusterFacts, config: StackConfig | None = None) -> dict[str, tuple[str, ...]]:
    plan, _ = plan_releases(facts, config or StackConfig(Mode.MANAGED))
    return {r.name: r.after for r in plan}


def test_a_native_cluster_on_the_default_scheduler_gets_lws_only() -> None:
    facts = ClusterFacts(kserve=False, scheduler=SCHEDULERS["Default"]())
    assert names(facts) == {"lws": ()}


def test_nvidia_gpus_bring_node_feature_discovery_then_the_dra_driver() -> None:
    facts = ClusterFacts(kserve=False, scheduler=SCHEDULERS["Default"](), nvidia_gpus=True)
    assert names(facts) == {
        "lws": (),
        "node-feature-discovery": (),
        "nvidia-dra-driver-gpu": ("node-feature-discovery",),
    }


def test_the_daemonsets_on_gpu_nodes_tolerate_the_gpu_pools_taints() -> None:
    # NFD's worker labels every GPU node and the DRA driver's kubelet plugin publishes
    # its GPUs: both must run on nodes tainted as the classes declare.
    taints = (
        NodeTaint("dedicated", "NoExecute", "inference"),
        NodeTaint("nvidia.com/gpu", "NoSchedule"),
    )
    facts = ClusterFacts(
        kserve=False, scheduler=SCHEDULERS["Default"](), nvidia_gpus=True, gpu_taints=taints
    )
    plan, _ = plan_releases(facts, StackConfig(Mode.MANAGED))
    values = {r.name: r.values for r in plan}
    expected = [
        {"key": "dedicated", "operator": "Equal", "value": "inference", "effect": "NoExecute"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert values["node-feature-discovery"]["worker"]["tolerations"] == expected
    dra = values["nvidia-dra-driver-gpu"]
    assert dra["kubeletPlugin"]["tolerations"] == expected
    assert dra["resources"]["gpus"] == {"enabled": True}  # the chart's own values kept
    # Untainted GPU pools: the charts' defaults, nothing added.
    untainted = ClusterFacts(kserve=False, scheduler=SCHEDULERS["Default"](), nvidia_gpus=True)
    plan, _ = plan_releases(untainted, StackConfig(Mode.MANAGED))
    assert {r.name: r.values for r in plan}["node-feature-discovery"] == {}


def test_a_created_clusters_cloud_adds_its_values_over_the_components_own() -> None:
    """On a GKE cluster Modelplane creates, the DRA driver reads the driver from GKE's
    directory; the tolerations and the chart's own values stay, and no other release
    (nor any release of a cluster without cloud values) changes."""
    gpu = (NodeTaint("nvidia.com/gpu", "NoSchedule"),)
    cloud = {"nvidiaDraDriver": {"nvidiaDriverRoot": "/dir", "kubeletPlugin": {"x": ""}}}
    base = ClusterFacts(
        kserve=False, scheduler=SCHEDULERS["Default"](), nvidia_gpus=True, gpu_taints=gpu
    )
    created = ClusterFacts(
        kserve=False,
        scheduler=SCHEDULERS["Default"](),
        nvidia_gpus=True,
        gpu_taints=gpu,
        cloud_values=cloud,
    )
    before = {r.name: r.values for r in plan_releases(base, StackConfig(Mode.MANAGED))[0]}
    after = {r.name: r.values for r in plan_releases(created, StackConfig(Mode.MANAGED))[0]}
    dra = after.pop("nvidia-dra-driver-gpu")
    assert dra["nvidiaDriverRoot"] == "/dir"
    assert dra["kubeletPlugin"] == {**before["nvidia-dra-driver-gpu"]["kubeletPlugin"], "x": ""}
    assert dra["resources"] == before.pop("nvidia-dra-driver-gpu")["resources"]
    assert after == before


def test_kserve_waits_for_its_crds_certificates_lws_and_gateway() -> None:
    facts = ClusterFacts(kserve=True, scheduler=Kueue())
    assert names(facts) == {
        "cert-manager": (),
        "envoy-gateway": (),
        "kserve-llmisvc": ("cert-manager", "envoy-gateway", "kserve-llmisvc-crd", "lws"),
        "kserve-llmisvc-configs": ("kserve-llmisvc",),
        "kserve-llmisvc-crd": (),
        "kueue": ("lws",),
        "lws": (),
    }


def test_a_gateway_brings_envoy_gateway_then_envoy_ai_gateway() -> None:
    # Every replica route behind the Gateway has an InferencePool backend, which Envoy
    # Gateway routes to only through Envoy AI Gateway, installed after it as upstream does.
    facts = ClusterFacts(kserve=False, scheduler=KAI(), gateway_class="eg")
    assert names(facts) == {
        "ai-gateway": ("ai-gateway-crds",),
        "ai-gateway-crds": ("envoy-gateway",),
        "envoy-gateway": (),
        "kai-scheduler": (),
        "lws": (),
    }
    plan, _ = plan_releases(facts, StackConfig(Mode.MANAGED))
    charts = {r.name: (r.chart, r.namespace) for r in plan if r.component == "envoyAiGateway"}
    repository = "oci://docker.io/envoyproxy"
    assert charts == {
        "ai-gateway-crds": (
            {"name": "ai-gateway-crds-helm", "repository": repository, "version": "v1.1.0"},
            "envoy-ai-gateway-system",
        ),
        "ai-gateway": (
            {"name": "ai-gateway-helm", "repository": repository, "version": "v1.1.0"},
            "envoy-ai-gateway-system",
        ),
    }


def test_a_kserve_cluster_without_a_gateway_gets_no_envoy_ai_gateway() -> None:
    # KServe needs the Gateway API, but routes nothing to an InferencePool unless the
    # cluster declares a gateway (no `spec.router`).
    plan, _ = plan_releases(ClusterFacts(kserve=True, scheduler=KAI()), StackConfig())
    assert not {"ai-gateway", "ai-gateway-crds"} & {r.name for r in plan}
    (envoy,) = [r for r in plan if r.name == "envoy-gateway"]
    assert "extensionManager" not in envoy.values["config"]["envoyGateway"]


BACKEND_ONLY = {"config": {"envoyGateway": {"extensionApis": {"enableBackend": True}}}}
EXTENSION = {
    "backendResources": [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "version": "v1"}
    ],
    "hooks": {
        "xdsTranslator": {
            "translation": {
                "listener": {"includeAll": True},
                "route": {"includeAll": True},
                "cluster": {"includeAll": True},
                "secret": {"includeAll": True},
            },
            "post": ["Translation", "Cluster", "Route"],
        }
    },
    "service": {
        "fqdn": {
            "hostname": "ai-gateway-controller.envoy-ai-gateway-system.svc.cluster.local",
            "port": 1063,
        }
    },
}


def test_envoy_gateway_calls_envoy_ai_gateway_for_inference_pools_once_it_runs() -> None:
    """Envoy Gateway serves its Backend kind (a hub's DNS-named backends) from the start;
    it hands InferencePool backends to Envoy AI Gateway's controller only once that runs
    (configured earlier, Envoy Gateway would never report ready: it cannot list
    InferencePools until Envoy AI Gateway's chart grants it)."""
    before = ClusterFacts(kserve=False, scheduler=KAI(), gateway_class="eg")
    after = replace(before, extension_ready=True)
    (envoy,) = [r for r in plan_releases(before, StackConfig())[0] if r.name == "envoy-gateway"]
    assert envoy.values == BACKEND_ONLY
    (envoy,) = [r for r in plan_releases(after, StackConfig())[0] if r.name == "envoy-gateway"]
    gateway = envoy.values["config"]["envoyGateway"]
    assert gateway == {"extensionApis": {"enableBackend": True}, "extensionManager": EXTENSION}
    (controller,) = [r for r in plan_releases(after, StackConfig())[0] if r.name == "ai-gateway"]
    # The Service the extension manager dials, and Envoy Gateway's namespace, whose
    # service account the chart lets read InferencePools.
    assert controller.values == {
        "controller": {"fullnameOverride": "ai-gateway-controller"},
        "envoyGateway": {"namespace": envoy.namespace},
    }
    # Without a gateway nothing calls an extension that is not installed.
    kserve = ClusterFacts(kserve=True, scheduler=KAI(), extension_ready=True)
    (envoy,) = [r for r in plan_releases(kserve, StackConfig())[0] if r.name == "envoy-gateway"]
    assert envoy.values == BACKEND_ONLY


def test_lws_follows_volcano_when_it_creates_volcano_podgroups() -> None:
    assert names(ClusterFacts(kserve=False, scheduler=Volcano()))["lws"] == ("volcano",)
    plan, _ = plan_releases(ClusterFacts(kserve=False, scheduler=Volcano()), StackConfig())
    (lws,) = [r for r in plan if r.name == "lws"]
    assert lws.values == {"gangSchedulingManagement": {"schedulerProvider": "volcano"}}
    without = names(ClusterFacts(kserve=False, scheduler=Volcano(lws_gang_scheduling=False)))
    assert without["lws"] == ()


def test_scheduler_settings_reach_its_chart() -> None:
    plan, _ = plan_releases(
        ClusterFacts(kserve=False, scheduler=KAI(queue_label_key="runai/queue")), StackConfig()
    )
    (kai,) = [r for r in plan if r.name == "kai-scheduler"]
    assert kai.values == {"podgrouper": {"queueLabelKey": "runai/queue"}}
    assert kai.chart == {
        "name": "kai-scheduler",
        "repository": "oci://ghcr.io/kai-scheduler/kai-scheduler",
        "version": "v0.17.0",
    }


def test_volcano_is_installed_with_its_dra_feature_gate_in_its_namespace() -> None:
    plan, _ = plan_releases(ClusterFacts(kserve=False, scheduler=Volcano()), StackConfig())
    (volcano,) = [r for r in plan if r.name == "volcano"]
    assert volcano.values == {
        "custom": {"scheduler_feature_gates": "DynamicResourceAllocation=true"}
    }
    assert volcano.namespace == "volcano-system"


def test_a_release_goes_to_the_namespace_named_for_its_chart_unless_pinned_elsewhere() -> None:
    plan, _ = plan_releases(
        ClusterFacts(kserve=True, scheduler=KAI(), nvidia_gpus=True), StackConfig()
    )
    assert {r.name: r.namespace for r in plan} == {
        "cert-manager": "cert-manager",
        "envoy-gateway": "envoy-gateway-system",
        "kai-scheduler": "kai-scheduler",
        "kserve-llmisvc": "kserve",
        "kserve-llmisvc-configs": "kserve",
        "kserve-llmisvc-crd": "kserve",
        "lws": "lws-system",
        "node-feature-discovery": "node-feature-discovery",
        "nvidia-dra-driver-gpu": "nvidia-dra-driver-gpu",
    }


def test_an_override_pins_a_component_and_an_unused_one_is_a_warning() -> None:
    config, issues = read_stack(
        Stack.model_validate(
            {"mode": "Managed", "versions": {"leaderWorkerSet": "0.9.1", "kserve": "v0.20.1"}}
        )
    )
    assert issues == []
    plan, warnings = plan_releases(ClusterFacts(kserve=False, scheduler=KAI()), config)
    (lws,) = [r for r in plan if r.name == "lws"]
    assert lws.chart["version"] == "0.9.1"
    assert [(w.path, w.severity) for w in warnings] == [
        ("spec.stack.versions[kserve]", Severity.WARNING)
    ]


def test_the_scheduler_plugins_chart_comes_from_its_release_package() -> None:
    config, _ = read_stack(
        Stack.model_validate({"mode": "Managed", "versions": {"schedulerPlugins": "0.33.1"}})
    )
    plan, _ = plan_releases(
        ClusterFacts(kserve=False, scheduler=SCHEDULERS["Coscheduling"]()), config
    )
    (plugins,) = [r for r in plan if r.name == "scheduler-plugins"]
    assert plugins.chart == {
        "name": "scheduler-plugins",
        "url": "https://github.com/kubernetes-sigs/scheduler-plugins/releases/download/"
        "v0.33.1/scheduler-plugins-0.33.1.tgz",
    }


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        ("1.2.3", True),
        ("v1.2.3", True),
        ("1.2.3-rc.1+build.5", True),
        ("1.2", False),
        ("latest", False),
        ("v01.2.3", False),
        ("", False),
        ("1.2.3 ", False),
    ],
)
def test_versions_are_semver_with_an_optional_v(version: str, ok: bool) -> None:
    _, issues = read_stack(Stack.model_construct(mode="Managed", versions={"kueue": version}))
    assert (issues == []) is ok, issues


SCHEDULER_INSTANCES: list[Scheduler] = [cls() for cls in SCHEDULERS.values()]


@given(
    st.booleans(),
    st.sampled_from(SCHEDULER_INSTANCES),
    st.sampled_from([None, "eg"]),
    st.booleans(),
)
def test_every_plan_is_ordered_and_closed(
    kserve: bool, scheduler: Scheduler, gateway: str | None, nvidia: bool
) -> None:
    """Every prerequisite is itself planned, and following `after` never loops."""
    plan, _ = plan_releases(ClusterFacts(kserve, scheduler, gateway, nvidia), StackConfig())
    after = {r.name: r.after for r in plan}
    assert [r.name for r in plan] == sorted(after)
    for name, prerequisites in after.items():
        assert set(prerequisites) <= set(after), name
    done: set[str] = set()
    while len(done) < len(after):
        ready = {n for n, pre in after.items() if n not in done and set(pre) <= done}
        assert ready, f"a cycle among {set(after) - done}"
        done |= ready
