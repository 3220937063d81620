"""The ClusterProviderConfigs of each kind of cluster, whole: a created GKE cluster's
carry the Google identity of the GCP provider config it is created with (its
kubeconfig has no credentials of its own); EKS and existing clusters' do not."""

from copy import deepcopy
from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .provisioned import SOURCE_BLOCKS, system_ready

Obj = dict[str, Any]
NAME = "gpu-east"
SYSTEM = "modelplane-system"
KUBECONFIG = {"name": f"{NAME}-kubeconfig", "namespace": SYSTEM, "key": "kubeconfig"}
GCP_SECRET = {
    "name": "gcp-credentials",
    "namespace": "crossplane-system",
    "key": "credentials.json",
}
PROVISIONING: dict[str, Obj] = {
    "EKS": {
        "provider": "EKS",
        "eks": {"instanceType": "p5.48xlarge", "accelerator": {"type": "nvidia-h100", "count": 8}},
    },
    "GKE": {
        "provider": "GKE",
        "gke": {
            "machineType": "a3-highgpu-8g",
            "accelerator": {"type": "nvidia-h100-80gb", "count": 8},
        },
    },
    "Existing": {},
}
SOURCES: dict[str, Obj] = {
    **SOURCE_BLOCKS,
    "Existing": {"existing": {"secretRef": {"name": "kc", "namespace": SYSTEM, "key": "kc"}}},
}


def cluster(source: str, provider_config_kind: str | None = None) -> Obj:
    block = deepcopy(SOURCES[source])
    if provider_config_kind is not None:
        block["gke"]["providerConfigRef"]["kind"] = provider_config_kind
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": NAME},
        "spec": {
            "cluster": {"source": source, **block},
            "nodePools": [{"name": "h100", "className": "h100", "nodeCount": 1}],
            "stack": {"mode": "Managed"},
        },
    }


def inference_class(source: str) -> Obj:
    spec: Obj = {
        "devices": [
            {
                "name": "gpu",
                "driver": "gpu.nvidia.com",
                "deviceClassName": "gpu.nvidia.com",
                "count": 8,
            }
        ]
    }
    if PROVISIONING[source]:
        spec["provisioning"] = PROVISIONING[source]
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "metadata": {"name": "h100"},
        "spec": spec,
    }


def gcp_provider_config(credentials: Obj, kind: str = "ClusterProviderConfig") -> Obj:
    metadata: Obj = {"name": "gcp"}
    if kind == "ProviderConfig":
        metadata["namespace"] = SYSTEM
    return {
        "apiVersion": "gcp.m.upbound.io/v1beta1",
        "kind": kind,
        "metadata": metadata,
        "spec": {"projectID": "my-project", "credentials": credentials},
    }


def respond(composite: Obj, source: str, gcp: list[Obj] | None, observed: Obj | None = None) -> Obj:
    required: dict[str, list[Obj]] = {
        "inferenceclass-h100": [inference_class(source)],
        "modelreplicas": [],
        "replica-objects": [],
    }
    if gcp is not None:
        required["gcp-provider-config"] = gcp
    # The system nodes Ready: a created cluster's stack is installed from then on.
    observed = {**system_ready(source), **(observed or {})}
    return as_dict(run(FunctionRunner(), request(composite, observed=observed, required=required)))


def provider_configs(secret_ref: Obj, identity: Obj | None) -> dict[str, Obj]:
    """Both ClusterProviderConfigs, as each provider's CRD spells them."""
    spec: Obj = {"credentials": {"source": "Secret", "secretRef": secret_ref}}
    if identity is not None:
        spec["identity"] = identity
    return {
        key: {
            "apiVersion": api_version,
            "kind": "ClusterProviderConfig",
            "metadata": {"name": NAME},
            "spec": spec,
        }
        for key, api_version in (
            ("provider-config", "kubernetes.m.crossplane.io/v1alpha1"),
            ("helm-provider-config", "helm.m.crossplane.io/v1beta1"),
        )
    }


def composed_provider_configs(rsp: Obj) -> dict[str, Obj]:
    resources = rsp["desired"].get("resources", {})
    return {
        key: resources[key]["resource"]
        for key in ("provider-config", "helm-provider-config")
        if key in resources
    }


SECRET_IDENTITY = {
    "type": "GoogleApplicationCredentials",
    "source": "Secret",
    "secretRef": GCP_SECRET,
}
CASES = [
    pytest.param(
        cluster("GKE"),
        "GKE",
        [gcp_provider_config({"source": "Secret", "secretRef": GCP_SECRET})],
        {
            "apiVersion": "gcp.m.upbound.io/v1beta1",
            "kind": "ClusterProviderConfig",
            "matchName": "gcp",
        },
        provider_configs(KUBECONFIG, SECRET_IDENTITY),
        id="GKE: the GCP provider config's service account key",
    ),
    pytest.param(
        cluster("GKE", "ProviderConfig"),
        "GKE",
        [gcp_provider_config({"source": "Secret", "secretRef": GCP_SECRET}, "ProviderConfig")],
        {
            "apiVersion": "gcp.m.upbound.io/v1beta1",
            "kind": "ProviderConfig",
            "matchName": "gcp",
            "namespace": SYSTEM,
        },
        provider_configs(KUBECONFIG, SECRET_IDENTITY),
        id="GKE: a namespaced ProviderConfig beside the managed resources",
    ),
    pytest.param(
        cluster("GKE"),
        "GKE",
        [gcp_provider_config({"source": "InjectedIdentity"})],
        {
            "apiVersion": "gcp.m.upbound.io/v1beta1",
            "kind": "ClusterProviderConfig",
            "matchName": "gcp",
        },
        provider_configs(
            KUBECONFIG, {"type": "GoogleApplicationCredentials", "source": "InjectedIdentity"}
        ),
        id="GKE: workload identity",
    ),
    pytest.param(
        cluster("EKS"),
        "EKS",
        None,
        None,
        provider_configs(KUBECONFIG, None),
        id="EKS: ClusterAuth's kubeconfig carries a token",
    ),
    pytest.param(
        cluster("Existing"),
        "Existing",
        None,
        None,
        provider_configs({"name": "kc", "namespace": SYSTEM, "key": "kc"}, None),
        id="Existing: the user's kubeconfig",
    ),
]


@pytest.mark.parametrize(("composite", "source", "gcp", "requirement", "want"), CASES)
def test_provider_configs(
    composite: Obj, source: str, gcp: list[Obj] | None, requirement: Obj | None, want: Obj
) -> None:
    rsp = respond(composite, source, gcp)
    assert composed_provider_configs(rsp) == want
    assert rsp["requirements"]["resources"].get("gcp-provider-config") == requirement


def test_a_gke_cluster_asks_for_its_gcp_provider_config() -> None:
    """The GCP provider config is required; until it is fetched the answer is the
    requirements alone (the runner's answer to a call lacking a key, which Crossplane
    never keeps), so no ClusterProviderConfig without the identity is ever applied."""
    rsp = respond(cluster("GKE"), "GKE", None)
    assert "gcp-provider-config" in rsp["requirements"]["resources"]
    assert not rsp.get("conditions") and not rsp.get("results")


HELD = (
    "; until then the cluster's ClusterProviderConfigs, and the Releases and Objects "
    "composed through them, are kept as they are, or not created"
)
FIELD = "spec.cluster.gke.providerConfigRef: names "


def unusable_source(source: str, kind: str = "ClusterProviderConfig") -> str:
    shown = "modelplane-system/gcp" if kind == "ProviderConfig" else "gcp"
    return (
        f"{FIELD}{kind} '{shown}', whose spec.credentials.source '{source}' provider-kubernetes "
        f"and provider-helm cannot reach a GKE cluster with: set that {kind}'s "
        "spec.credentials.source to Secret (a service account key) or InjectedIdentity "
        f"(Workload Identity){HELD}"
    )


MISSING = (
    f"{FIELD}ClusterProviderConfig 'gcp', which does not exist: create it (apiVersion "
    f"gcp.m.upbound.io/v1beta1) with spec.credentials.source Secret or InjectedIdentity{HELD}"
)
NO_KEY = (
    f"{FIELD}ClusterProviderConfig 'gcp', whose spec.credentials.secretRef lacks a name, "
    f"namespace or key: set all three on that ClusterProviderConfig{HELD}"
)
GOOD = [gcp_provider_config({"source": "Secret", "secretRef": GCP_SECRET})]
UNUSABLE = [
    pytest.param(
        "ClusterProviderConfig",
        [gcp_provider_config({"source": "ImpersonateServiceAccount"})],
        unusable_source("ImpersonateServiceAccount"),
        id="impersonation",
    ),
    pytest.param(
        "ClusterProviderConfig",
        [gcp_provider_config({"source": "AccessToken"})],
        unusable_source("AccessToken"),
        id="an access token",
    ),
    pytest.param(
        "ProviderConfig",
        [gcp_provider_config({"source": "Upbound"}, "ProviderConfig")],
        unusable_source("Upbound", "ProviderConfig"),
        id="Upbound, on a namespaced ProviderConfig",
    ),
    pytest.param("ClusterProviderConfig", [], MISSING, id="no such GCP provider config"),
    pytest.param(
        "ClusterProviderConfig",
        [gcp_provider_config({"source": "Secret", "secretRef": {"name": "gcp-credentials"}})],
        NO_KEY,
        id="a Secret source without its key",
    ),
]


def good_provider_configs(kind: str) -> list[Obj]:
    return [gcp_provider_config({"source": "Secret", "secretRef": GCP_SECRET}, kind)]


def through_provider_configs(rsp: Obj) -> set[str]:
    """What a GKE cluster composes that needs its ClusterProviderConfigs: they, the
    Releases and Objects applied through them (the stack's, and the cloud's own such
    as GKE's NVIDIA driver installer), and the Usages one of those uses."""
    bodies = {k: v["resource"] for k, v in rsp["desired"]["resources"].items()}
    reach = {"kind": "ClusterProviderConfig", "name": NAME}
    inside = {
        k
        for k, body in bodies.items()
        if k in ("provider-config", "helm-provider-config")
        or (
            body["kind"] in ("Object", "Release")
            and body.get("spec", {}).get("providerConfigRef") == reach
        )
    }
    named = {(bodies[k]["kind"], bodies[k]["metadata"]["name"]) for k in inside}
    return inside | {
        k
        for k, body in bodies.items()
        if body["kind"] == "Usage"
        and (body["spec"]["by"]["kind"], body["spec"]["by"]["resourceRef"]["name"]) in named
    }


def without(rsp: Obj, condition_type: str) -> list[Obj]:
    return [c for c in rsp["conditions"] if c["type"] != condition_type]


def provisioned_false(rsp: Obj, message: str) -> None:
    """Provisioned names the field, with one Warning event, and nothing else does."""
    (provisioned,) = [c for c in rsp["conditions"] if c["type"] == "Provisioned"]
    assert provisioned == {
        "type": "Provisioned",
        "status": "STATUS_CONDITION_FALSE",
        "reason": "InvalidProvisioning",
        "message": message,
        "target": "TARGET_COMPOSITE",
    }
    assert rsp["results"] == [
        {
            "severity": "SEVERITY_WARNING",
            "message": message,
            "reason": "UnusableCredentials",
            "target": "TARGET_COMPOSITE",
        }
    ]


@pytest.mark.parametrize(("kind", "gcp", "message"), UNUSABLE)
def test_a_new_cluster_with_unusable_credentials_is_created_without_provider_configs(
    kind: str, gcp: list[Obj], message: str
) -> None:
    """The cloud cluster and its pools need no identity: composed as with usable
    credentials. Nothing that needs it is: no ClusterProviderConfig without its
    identity, nor the Releases and Objects that would go through one."""
    composite = cluster("GKE", kind)
    good = respond(composite, "GKE", good_provider_configs(kind))
    inside = through_provider_configs(good)
    assert {"provider-config", "helm-provider-config", "release-lws"} <= inside
    rsp = respond(composite, "GKE", gcp)
    assert rsp["desired"]["resources"] == {
        k: v for k, v in good["desired"]["resources"].items() if k not in inside
    }
    assert rsp["desired"]["composite"] == good["desired"]["composite"]
    provisioned_false(rsp, message)
    assert without(rsp, "Provisioned") == without(good, "Provisioned")
    assert rsp["requirements"] == good["requirements"]


def running(rsp: Obj) -> dict[str, Obj]:
    """What `rsp` composed, as Crossplane observes it once all of it is Ready."""
    ready = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}
    return {k: {**v["resource"], "status": ready} for k, v in rsp["desired"]["resources"].items()}


@pytest.mark.parametrize(("kind", "gcp", "message"), UNUSABLE)
def test_an_existing_cluster_whose_credentials_became_unusable_keeps_what_runs(
    kind: str, gcp: list[Obj], message: str
) -> None:
    """Everything composed before is emitted as it runs, the ClusterProviderConfigs
    (and their identity) byte for byte; what usable credentials would add next (the
    releases that follow the Ready ones) is not composed."""
    composite = cluster("GKE", kind)
    observed = running(respond(composite, "GKE", good_provider_configs(kind)))
    following = respond(composite, "GKE", good_provider_configs(kind), observed)
    assert set(following["desired"]["resources"]) - set(observed), "nothing would follow"
    rsp = respond(composite, "GKE", gcp, observed)
    assert {k: v["resource"] for k, v in rsp["desired"]["resources"].items()} == {
        k: {f: v for f, v in body.items() if f != "status"} for k, body in observed.items()
    }
    for key in ("provider-config", "helm-provider-config"):
        assert rsp["desired"]["resources"][key]["ready"] == "READY_TRUE"
    provisioned_false(rsp, message)
