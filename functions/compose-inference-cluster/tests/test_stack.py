"""compose-inference-cluster's serving stack, as whole responses: Releases in order,
Usages, observed prerequisites, StackReady and TenancyConfigured, and bad input
that keeps everything composed before."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_cli.testing import as_dict, request, run, run_over_grpc

Obj = dict[str, Any]
NAME = "gpu-east"
SYSTEM = "modelplane-system"
GPU = {
    "name": "gpu",
    "claim": "DRA",
    "driver": "gpu.nvidia.com",
    "deviceClassName": "gpu.nvidia.com",
    "count": 8,
}
CLASS = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceClass",
    "metadata": {"name": "h100-8x"},
    "spec": {"devices": [GPU]},
}
REQUIRED = {"inferenceclass-h100-8x": [CLASS], "modelreplicas": []}


def cluster(stack: Obj | None = None, **spec: Any) -> Obj:
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": NAME},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": "kc", "namespace": SYSTEM, "key": "kc"}},
            },
            "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 2}],
            "scheduling": {"provider": "Coscheduling"},
            **spec,
        },
    }
    if stack is not None:
        obj["spec"]["stack"] = stack
    return obj


MANAGED = {"mode": "Managed"}
READY = {
    "status": {
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Available"},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
        ]
    }
}
ABSENT = {
    "status": {
        "conditions": [
            {
                "type": "Synced",
                "status": "False",
                "reason": "ReconcileError",
                "message": "observe failed: external resource does not exist",
            }
        ]
    }
}


def credentials(api_version: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "ClusterProviderConfig",
        "metadata": {"name": NAME},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {"name": "kc", "namespace": SYSTEM, "key": "kc"},
            }
        },
    }


KUBERNETES_PC = credentials("kubernetes.m.crossplane.io/v1alpha1")
HELM_PC = credentials("helm.m.crossplane.io/v1beta1")


def release(name: str, chart: Obj, namespace: str, values: Obj | None = None) -> Obj:
    for_provider: Obj = {"chart": chart, "namespace": namespace, "wait": True}
    if values:
        for_provider["values"] = values
    return {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "Release",
        "metadata": {"name": f"{NAME}-{name}", "namespace": SYSTEM},
        "spec": {
            "forProvider": for_provider,
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": NAME},
        },
    }


NFD = release(
    "node-feature-discovery",
    {
        "name": "node-feature-discovery",
        "repository": "https://kubernetes-sigs.github.io/node-feature-discovery/charts",
        "version": "0.18.3",
    },
    "node-feature-discovery",
)
DRA_DRIVER = release(
    "nvidia-dra-driver-gpu",
    {
        "name": "nvidia-dra-driver-gpu",
        "repository": "https://helm.ngc.nvidia.com/nvidia",
        "version": "25.12.0",
    },
    "nvidia-dra-driver-gpu",
    {
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "gpuResourcesEnabledOverride": True,
    },
)
LWS = release(
    "lws",
    {"name": "lws", "repository": "oci://registry.k8s.io/lws/charts", "version": "0.10.0"},
    "lws-system",
)
SCHEDULER_PLUGINS = release(
    "scheduler-plugins",
    {
        "name": "scheduler-plugins",
        "url": "https://github.com/kubernetes-sigs/scheduler-plugins/releases/download/"
        "v0.34.7/scheduler-plugins-0.34.7.tgz",
    },
    "scheduler-plugins",
)


def observer(name: str, api_version: str, kind: str, object_name: str) -> Obj:
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": name, "namespace": SYSTEM},
        "spec": {
            "forProvider": {
                "manifest": {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {"name": object_name},
                }
            },
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": NAME},
            "managementPolicies": ["Observe"],
        },
    }


CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
LWS_CRD = "leaderworkersets.leaderworkerset.x-k8s.io"
PODGROUP_CRD = "podgroups.scheduling.x-k8s.io"
OBSERVERS = {
    f"observe-customresourcedefinition-{LWS_CRD}": observer(
        "gpu-east-customresourcedefinition-85924fbee5", *CRD, LWS_CRD
    ),
    f"observe-customresourcedefinition-{PODGROUP_CRD}": observer(
        "gpu-east-customresourcedefinition-6c7d2ab5c2", *CRD, PODGROUP_CRD
    ),
    "observe-deviceclass-gpu.nvidia.com": observer(
        "gpu-east-deviceclass-beddeba70f", "resource.k8s.io/v1", "DeviceClass", "gpu.nvidia.com"
    ),
}
OBSERVED_READY = {key: {**body, **READY} for key, body in OBSERVERS.items()}
REQUIREMENTS = {
    "resources": {
        "inferenceclass-h100-8x": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceClass",
            "matchName": "h100-8x",
        },
        "modelreplicas": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelReplica",
            "matchLabels": {"labels": {"modelplane.ai/cluster": NAME}},
        },
        "replica-objects": {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "Object",
            "matchLabels": {"labels": {"modelplane.ai/cluster": NAME}},
        },
    }
}
POOLS = [
    {
        "name": "h100",
        "className": "h100-8x",
        "nodes": 2,
        "devices": [GPU],
    }
]


def condition(type_: str, status: str, reason: str, message: str) -> Obj:
    return {
        "type": type_,
        "status": f"STATUS_CONDITION_{status}",
        "reason": reason,
        "message": message,
        "target": "TARGET_COMPOSITE",
    }


VALID = [
    condition("PoolsResolved", "TRUE", "ClassesResolved", "1 pools published"),
    condition("SchedulingConfigured", "TRUE", "SchedulingValid", "scheduling conventions valid"),
    condition(
        "TenancyConfigured", "TRUE", "TenancyValid", "tenant namespaces and their metadata valid"
    ),
]


def response(
    resources: dict[str, Obj],
    stack_ready: Obj,
    stack: Obj,
    results: list[Obj] | None = None,
    ready_composite: str | None = None,
    probes: int = 3,
) -> Obj:
    """`probes`: the observed Objects, all reaching the cluster (Healthy)."""
    message = (
        f"{probes} of {probes} Objects reach the cluster"
        if probes
        else "no Object has synced or failed yet"
    )
    healthy = condition("Healthy", "TRUE", "ClusterHealthy", message)
    want: Obj = {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {
            "composite": {
                "resource": {
                    "status": {
                        "gpuPools": POOLS,
                        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": NAME},
                        "stack": stack,
                        "capacity": {
                            "pools": [
                                {
                                    "name": "h100",
                                    "nodes": 2,
                                    "devices": {"gpu": {"total": 16, "committed": 0}},
                                }
                            ],
                            "queues": [],
                        },
                    }
                }
            },
            "resources": resources,
        },
        "requirements": REQUIREMENTS,
        "context": {},
        "conditions": [*VALID, stack_ready, healthy],
    }
    if ready_composite:
        want["desired"]["composite"]["ready"] = ready_composite
    if results:
        want["results"] = [{"target": "TARGET_COMPOSITE", **r} for r in results]
    return want


def composed(body: Obj, ready: bool | None) -> Obj:
    out: Obj = {"resource": body}
    if ready is not None:
        out["ready"] = "READY_TRUE" if ready else "READY_FALSE"
    return out


def usage(name: str, namespace: str, of: str, by: Obj) -> Obj:
    return {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "of": {
                "apiVersion": "helm.m.crossplane.io/v1beta1",
                "kind": "Release",
                "resourceRef": {"name": f"{NAME}-{of}", "namespace": SYSTEM},
            },
            "by": by,
            "replayDeletion": True,
        },
    }


FIRST_CALL = response(
    {
        "provider-config": composed(KUBERNETES_PC, None),
        "helm-provider-config": composed(HELM_PC, None),
        "release-lws": composed(LWS, False),
        "release-node-feature-discovery": composed(NFD, False),
        "release-scheduler-plugins": composed(SCHEDULER_PLUGINS, False),
        **{key: composed(body, False) for key, body in OBSERVERS.items()},
    },
    condition(
        "StackReady",
        "UNKNOWN",
        "InstallingStack",
        "installing: lws, node-feature-discovery, nvidia-dra-driver-gpu, scheduler-plugins",
    ),
    {"checked": 0, "missing": []},
    probes=0,
)

INSTALLED_BEFORE_DRIVER = {
    "provider-config": KUBERNETES_PC,
    "helm-provider-config": HELM_PC,
    "release-lws": {**LWS, **READY},
    "release-node-feature-discovery": {**NFD, **READY},
    "release-scheduler-plugins": {**SCHEDULER_PLUGINS, **READY},
    **OBSERVED_READY,
}
NFD_BY_DRIVER = usage(
    "gpu-east-node-feature-discovery-bd9d344b5a",
    SYSTEM,
    "node-feature-discovery",
    {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "Release",
        "resourceRef": {"name": f"{NAME}-nvidia-dra-driver-gpu"},
    },
)
SECOND_CALL = response(
    {
        "provider-config": composed(KUBERNETES_PC, True),
        "helm-provider-config": composed(HELM_PC, True),
        "release-lws": composed(LWS, True),
        "release-node-feature-discovery": composed(NFD, True),
        "release-nvidia-dra-driver-gpu": composed(DRA_DRIVER, False),
        "release-scheduler-plugins": composed(SCHEDULER_PLUGINS, True),
        "usage-node-feature-discovery-by-nvidia-dra-driver-gpu": composed(NFD_BY_DRIVER, None),
        **{key: composed(body, True) for key, body in OBSERVERS.items()},
    },
    condition("StackReady", "UNKNOWN", "InstallingStack", "installing: nvidia-dra-driver-gpu"),
    {"checked": 3, "missing": []},
)

BAD_VERSIONS = {
    "mode": "Managed",
    "versions": {"leaderWorkerSet": "latest", "dynamo": "1.0.0", "kueue": "0.19.2"},
}
INVALID_STACK = (
    "spec.stack.versions[dynamo]: unknown component 'dynamo'; components are certManager, "
    "envoyGateway, kai, kserve, kueue, leaderWorkerSet, nodeFeatureDiscovery, "
    "nvidiaDraDriver, schedulerPlugins, volcano; spec.stack.versions[leaderWorkerSet]: "
    "'latest' is not a semantic version (No Major.Minor.Patch elements found)"
)
KEPT_AS_THEY_ARE = response(
    {
        "provider-config": composed(KUBERNETES_PC, True),
        # Kept exactly as observed, each as ready as it is.
        "helm-provider-config": composed(HELM_PC, False),
        "release-lws": composed(LWS, True),
        "release-node-feature-discovery": composed(NFD, True),
        "release-scheduler-plugins": composed(SCHEDULER_PLUGINS, True),
        **{key: composed(body, True) for key, body in OBSERVERS.items()},
    },
    condition("StackReady", "FALSE", "InvalidStack", INVALID_STACK),
    {"checked": 3, "missing": []},
    results=[
        {
            "severity": "SEVERITY_WARNING",
            "reason": "InvalidStack",
            "message": "spec.stack.versions[dynamo]: unknown component 'dynamo'; components "
            "are certManager, envoyGateway, kai, kserve, kueue, leaderWorkerSet, "
            "nodeFeatureDiscovery, nvidiaDraDriver, schedulerPlugins, volcano",
        },
        {
            "severity": "SEVERITY_WARNING",
            "reason": "InvalidStack",
            "message": "spec.stack.versions[leaderWorkerSet]: 'latest' is not a semantic "
            "version (No Major.Minor.Patch elements found)",
        },
    ],
)

HANDED_OVER = response(
    {
        "provider-config": composed(KUBERNETES_PC, True),
        "helm-provider-config": composed(HELM_PC, False),
        **{
            key: composed(
                {**body, "spec": {**body["spec"], "managementPolicies": ["Observe"]}}, True
            )
            for key, body in (
                ("release-lws", LWS),
                ("release-node-feature-discovery", NFD),
                ("release-scheduler-plugins", SCHEDULER_PLUGINS),
            )
        },
        **{key: composed(body, True) for key, body in OBSERVERS.items()},
    },
    condition("StackReady", "TRUE", "StackComplete", "3 prerequisites present"),
    {"checked": 3, "missing": []},
)

MISSING = response(
    {
        "provider-config": composed(KUBERNETES_PC, None),
        **{
            key: composed(body, key != f"observe-customresourcedefinition-{LWS_CRD}")
            for key, body in OBSERVERS.items()
        },
    },
    condition(
        "StackReady",
        "FALSE",
        "PrerequisitesMissing",
        f"missing: CustomResourceDefinition {LWS_CRD} (needed by multi-node replicas)",
    ),
    {
        "checked": 3,
        "missing": [
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "name": LWS_CRD,
                "scope": "MultiNode",
            }
        ],
    },
)

CASES = [
    pytest.param(
        request(cluster(MANAGED), required=REQUIRED),
        FIRST_CALL,
        id="managed: releases with no prerequisite first, the DRA driver waits for NFD",
    ),
    pytest.param(
        request(cluster(MANAGED), required=REQUIRED, observed=INSTALLED_BEFORE_DRIVER),
        SECOND_CALL,
        id="managed: NFD Ready, so the DRA driver, used by it, follows",
    ),
    pytest.param(
        request(cluster(BAD_VERSIONS), required=REQUIRED, observed=INSTALLED_BEFORE_DRIVER),
        KEPT_AS_THEY_ARE,
        id="bad versions and an unknown component: named, every Release kept",
    ),
    pytest.param(
        request(cluster({"mode": "Observe"}), required=REQUIRED, observed=INSTALLED_BEFORE_DRIVER),
        HANDED_OVER,
        id="managed to observe: charts handed over, never uninstalled",
    ),
    pytest.param(
        request(
            cluster(),
            required=REQUIRED,
            observed={
                **OBSERVED_READY,
                f"observe-customresourcedefinition-{LWS_CRD}": {
                    **OBSERVERS[f"observe-customresourcedefinition-{LWS_CRD}"],
                    **ABSENT,
                },
            },
        ),
        MISSING,
        id="observe: a missing CRD is published with the replicas it keeps away",
    ),
]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_stack(req: Any, want: Obj) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


@pytest.mark.parametrize(("req", "want"), CASES)
def test_same_response_over_grpc(req: Any, want: Obj) -> None:
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def placed(name: str, namespace: str = "team-a", *, pipeline: int = 1) -> Obj:
    """A ModelReplica the fleet scheduler placed on this cluster."""
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"modelplane.ai/cluster": NAME},
        },
        "spec": {
            "deploymentName": "chat",
            "clusterName": NAME,
            "index": 0,
            "priority": "inference",
            "workers": {
                "count": 1,
                "topology": {"pipeline": pipeline},
                "nodePoolName": "h100",
                "deviceRequests": [
                    {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 8}
                ],
                "template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}},
            },
        },
    }


KUEUE = {"provider": "Kueue", "queue": "{{ .Namespace }}-gpu"}


def test_placed_replicas_name_their_queues_and_protect_what_they_need() -> None:
    obj = cluster(MANAGED, scheduling=KUEUE, tenancy={"namespace": "serve-{{ .Namespace }}"})
    req = request(
        obj,
        required={**REQUIRED, "modelreplicas": [placed("chat-1", pipeline=2)]},
        observed={f"release-{n}": READY for n in ("lws", "kueue", "nvidia-dra-driver-gpu")},
    )
    got = as_dict(run(FunctionRunner(), req))
    resources = got["desired"]["resources"]
    queue = resources["observe-localqueue-serve-team-a-team-a-gpu"]["resource"]
    assert queue["spec"]["forProvider"]["manifest"] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a-gpu", "namespace": "serve-team-a"},
    }
    priority = resources["observe-priorityclass-inference"]["resource"]
    assert priority["spec"]["forProvider"]["manifest"]["metadata"] == {"name": "inference"}
    # A multi-node replica on a Native cluster needs the DRA driver, LWS and Kueue.
    protected = {
        key: (r["resource"]["metadata"]["namespace"], r["resource"]["spec"]["of"]["resourceRef"])
        for key, r in resources.items()
        if key.startswith("usage-replica-")
    }
    assert protected == {
        f"usage-replica-{name}-team-a-chat-1": (
            "team-a",
            {"name": f"{NAME}-{name}", "namespace": SYSTEM},
        )
        for name in ("kueue", "lws", "nvidia-dra-driver-gpu")
    }
    by = resources["usage-replica-lws-team-a-chat-1"]["resource"]["spec"]["by"]
    assert by == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "resourceRef": {"name": "chat-1"},
    }


def test_an_unreadable_replica_keeps_what_it_protects_and_what_observes_its_queue() -> None:
    obj = cluster(MANAGED, scheduling=KUEUE)
    before = as_dict(
        run(
            FunctionRunner(),
            request(
                obj,
                required={**REQUIRED, "modelreplicas": [placed("chat-1")]},
                observed={f"release-{n}": READY for n in ("lws", "kueue", "nvidia-dra-driver-gpu")},
            ),
        )
    )["desired"]["resources"]
    unreadable = placed("chat-1")
    unreadable["spec"]["index"] = "first"
    observed = {key: value["resource"] for key, value in before.items()}
    got = as_dict(
        run(
            FunctionRunner(),
            request(obj, required={**REQUIRED, "modelreplicas": [unreadable]}, observed=observed),
        )
    )["desired"]["resources"]
    assert set(before) <= set(got)
    assert "observe-localqueue-mp-team-a-team-a-gpu" in got


def test_an_invalid_tenancy_is_named_and_keeps_the_queues_observed() -> None:
    obj = cluster(scheduling=KUEUE)
    req = request(obj, required={**REQUIRED, "modelreplicas": [placed("chat-1")]})
    queue_key = "observe-localqueue-mp-team-a-team-a-gpu"
    first = as_dict(run(FunctionRunner(), req))["desired"]["resources"]
    assert queue_key in first
    obj["spec"]["tenancy"] = {"namespace": "{{ .Name }}"}
    got = as_dict(
        run(
            FunctionRunner(),
            request(
                obj,
                required={**REQUIRED, "modelreplicas": [placed("chat-1")]},
                observed={queue_key: first[queue_key]["resource"]},
            ),
        )
    )
    tenancy = next(c for c in got["conditions"] if c["type"] == "TenancyConfigured")
    assert tenancy["status"] == "STATUS_CONDITION_FALSE"
    assert tenancy["reason"] == "InvalidTenancy"
    assert tenancy["message"].startswith("spec.tenancy.namespace: {{ .Name }} differs")
    assert got["desired"]["resources"][queue_key]["resource"] == first[queue_key]["resource"]


def test_an_override_for_a_component_the_cluster_does_not_install_is_a_warning() -> None:
    req = request(
        cluster({"mode": "Managed", "versions": {"kserve": "v0.20.1"}}), required=REQUIRED
    )
    got = as_dict(run(FunctionRunner(), req))
    assert got["results"] == [
        {
            "severity": "SEVERITY_WARNING",
            "reason": "StackFieldIgnored",
            "message": "spec.stack.versions[kserve]: KServe LLMInferenceService is not installed "
            "on this cluster; the override does nothing",
            "target": "TARGET_COMPOSITE",
        }
    ]
    stack = next(c for c in got["conditions"] if c["type"] == "StackReady")
    assert stack["reason"] == "InstallingStack"


def test_an_override_pins_the_chart() -> None:
    req = request(
        cluster({"mode": "Managed", "versions": {"leaderWorkerSet": "0.9.1"}}), required=REQUIRED
    )
    got = as_dict(run(FunctionRunner(), req))
    chart = got["desired"]["resources"]["release-lws"]["resource"]["spec"]["forProvider"]["chart"]
    assert chart["version"] == "0.9.1"


def test_what_an_installing_release_brings_is_progress_not_a_fault() -> None:
    observed = {
        **INSTALLED_BEFORE_DRIVER,
        "release-lws": LWS,  # composed, not Ready yet
        f"observe-customresourcedefinition-{LWS_CRD}": {
            **OBSERVERS[f"observe-customresourcedefinition-{LWS_CRD}"],
            **ABSENT,
        },
    }
    got = as_dict(
        run(FunctionRunner(), request(cluster(MANAGED), required=REQUIRED, observed=observed))
    )
    stack = next(c for c in got["conditions"] if c["type"] == "StackReady")
    assert stack == condition(
        "StackReady",
        "UNKNOWN",
        "InstallingStack",
        "installing: lws, nvidia-dra-driver-gpu; missing until then: CustomResourceDefinition "
        f"{LWS_CRD} (needed by multi-node replicas)",
    )
    # New multi-node replicas are still kept away meanwhile.
    missing = got["desired"]["composite"]["resource"]["status"]["stack"]["missing"]
    assert [m["name"] for m in missing] == [LWS_CRD]


@pytest.mark.parametrize("backend", ["Native", "KServe"])
@pytest.mark.parametrize("provider", ["Default", "KAI", "Kueue", "Volcano", "Coscheduling"])
def test_every_release_of_every_stack_validates_against_provider_helm(
    backend: str, provider: str, manifest_validator: Any
) -> None:
    """Installed to the end (each round's Releases reported Ready), every Release and
    Usage is composed, and every Release is valid for provider-helm's CRD."""
    obj = cluster(MANAGED, backend={"type": backend}, scheduling={"provider": provider})
    got: Obj = as_dict(run(FunctionRunner(), request(obj, required=REQUIRED)))
    resources: dict[str, Obj] = got["desired"]["resources"]
    for _ in range(5):
        observed = {key: {**value["resource"], **READY} for key, value in resources.items()}
        got = as_dict(run(FunctionRunner(), request(obj, required=REQUIRED, observed=observed)))
        resources = got["desired"]["resources"]
    stack = next(c for c in got["conditions"] if c["type"] == "StackReady")
    assert stack["reason"] == "StackComplete", stack
    releases = [v["resource"] for k, v in resources.items() if k.startswith("release-")]
    assert len(releases) >= 3
    for release in releases:
        assert manifest_validator.validate(release) == [], release["metadata"]["name"]
    # Every ordering edge is a Usage between two composed Releases.
    names = {r["metadata"]["name"] for r in releases}
    for key, value in resources.items():
        if key.startswith("usage-") and not key.startswith("usage-replica-"):
            spec = value["resource"]["spec"]
            assert spec["of"]["resourceRef"]["name"] in names
            assert spec["by"]["resourceRef"]["name"] in names


def test_the_gateway_class_is_read_only_where_the_model_declares_it() -> None:
    """`spec.gateway` belongs to the traffic path; until the XRD declares it the
    generated model has no such field and no gateway is assumed."""
    from types import SimpleNamespace

    from compose_inference_cluster.stack import gateway_class
    from modelplane_models import InferenceCluster

    from modelplane.core.issues import parse_object

    assert gateway_class(parse_object(InferenceCluster, cluster())) is None
    declared = InferenceCluster.model_construct(
        spec=SimpleNamespace(gateway=SimpleNamespace(gatewayClassName="eg"))
    )
    assert gateway_class(declared) == "eg"
