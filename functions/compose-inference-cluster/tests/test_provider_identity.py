"""The ClusterProviderConfigs of each kind of cluster, whole: a created GKE cluster's
carry the Google identity of the GCP provider config it is created with (its
kubeconfig has no credentials of its own); EKS and existing clusters' do not."""

from copy import deepcopy
from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .test_provision import SOURCE_BLOCKS

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


BAD = [
    pytest.param(
        [],
        "spec.cluster.gke.providerConfigRef: names ClusterProviderConfig 'gcp', which does not exist",
        id="no such GCP provider config",
    ),
    pytest.param(
        [gcp_provider_config({"source": "ImpersonateServiceAccount"})],
        "spec.cluster.gke.providerConfigRef: names ClusterProviderConfig 'gcp', whose "
        "spec.credentials.source is 'ImpersonateServiceAccount'",
        id="credentials the other providers cannot use",
    ),
    pytest.param(
        [gcp_provider_config({"source": "Secret", "secretRef": {"name": "gcp-credentials"}})],
        "spec.cluster.gke.providerConfigRef: names ClusterProviderConfig 'gcp', whose "
        "spec.credentials.secretRef lacks a name, namespace or key",
        id="a Secret source without its key",
    ),
]


@pytest.mark.parametrize(("gcp", "message"), BAD)
def test_unusable_gcp_credentials_name_the_field_and_keep_what_was_composed(
    gcp: list[Obj], message: str
) -> None:
    good = respond(
        cluster("GKE"), "GKE", [gcp_provider_config({"source": "Secret", "secretRef": GCP_SECRET})]
    )
    observed = {k: v["resource"] for k, v in good["desired"]["resources"].items()}
    rsp = respond(cluster("GKE"), "GKE", gcp, observed)
    (pools,) = [c for c in rsp["conditions"] if c["type"] == "PoolsResolved"]
    assert pools["status"] == "STATUS_CONDITION_FALSE"
    assert message in pools["message"]
    assert any(message in r.get("message", "") for r in rsp.get("results", []))
    # Everything composed before is emitted as observed, the identity included.
    assert {k: v["resource"] for k, v in rsp["desired"]["resources"].items()} == observed
