"""Created clusters at admission: the EKS and GKE blocks, pool sizes, and what an
update may not change (transition rules, run by the schema harness on update)."""

from copy import deepcopy
from typing import Any

import pytest

from .test_xrds import REGISTRY, edited, errors

Obj = dict[str, Any]

EKS: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceCluster",
    "metadata": {"name": "prod-eks"},
    "spec": {
        "cluster": {
            "source": "EKS",
            "eks": {"region": "us-east-1", "version": "1.34", "providerConfigRef": {"name": "aws"}},
        },
        "nodePools": [
            {"name": "h100", "className": "h100-8x", "nodeCount": 2, "minNodes": 0, "maxNodes": 8}
        ],
    },
}
GKE: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceCluster",
    "metadata": {"name": "prod-gke"},
    "spec": {
        "cluster": {
            "source": "GKE",
            "gke": {
                "project": "my-project",
                "location": "us-central1",
                "providerConfigRef": {"name": "gcp"},
                "network": {"network": "default", "subnetwork": "default"},
            },
        },
        "nodePools": [{"name": "l4", "className": "l4-1x", "nodeCount": 1}],
    },
}
EKS_SUBNETS: Obj = {"subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]}
GKE_OWN_NETWORK: Obj = deepcopy(GKE)
del GKE_OWN_NETWORK["spec"]["cluster"]["gke"]["network"]
EXISTING: Obj = {
    **EKS,
    "spec": {
        **EKS["spec"],
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": "kc", "namespace": "ops"}},
        },
    },
}


def _schema() -> Any:
    schema = REGISTRY.get("modelplane.ai/v1alpha1", "InferenceCluster")
    assert schema is not None
    return schema


def update_errors(old: Obj, new: Obj) -> list[str]:
    _, problems = _schema().admit_update(new, old)
    return [str(p) for p in problems]


@pytest.mark.parametrize("valid", [EKS, GKE], ids=["eks", "gke"])
def test_created_clusters_are_admitted(valid: Obj) -> None:
    assert errors(valid) == []


def test_the_provider_config_kind_defaults_to_the_cluster_scoped_one() -> None:
    admitted, _ = _schema().admit(EKS)
    ref = admitted["spec"]["cluster"]["eks"]["providerConfigRef"]
    assert ref == {"name": "aws", "kind": "ClusterProviderConfig"}


REJECTED = [
    pytest.param(
        edited(EKS, "spec.cluster.eks", None),
        "spec.cluster.eks: Required value: cluster.eks is required when source is EKS",
        id="EKS needs its block",
    ),
    pytest.param(
        edited(GKE, "spec.cluster.gke", None),
        "spec.cluster.gke: Required value: cluster.gke is required when source is GKE",
        id="GKE needs its block",
    ),
    pytest.param(
        edited(EKS, "spec.cluster.gke", GKE["spec"]["cluster"]["gke"]),
        "set only the sub-block of the chosen source",
        id="one block only",
    ),
    pytest.param(
        edited(EKS, "spec.cluster.eks.network", {"subnetIds": ["subnet-0123456789abcdef0"]}),
        "spec.cluster.eks.network.subnetIds: Invalid value",
        id="subnets in two zones at least",
    ),
    pytest.param(
        edited(EKS, "spec.nodePools.0.minNodes", 9),
        'spec.nodePools[0].maxNodes: Invalid value: "object": maxNodes must be at least minNodes',
        id="maxNodes below minNodes",
    ),
    pytest.param(
        edited(EKS, "spec.nodePools.0.nodeCount", 9),
        'spec.nodePools[0].nodeCount: Invalid value: "object": nodeCount must be at most maxNodes',
        id="nodeCount above maxNodes",
    ),
    pytest.param(
        edited(edited(EKS, "spec.nodePools.0.minNodes", 3), "spec.nodePools.0.nodeCount", 1),
        'spec.nodePools[0].nodeCount: Invalid value: "object": nodeCount must be at least minNodes',
        id="nodeCount below minNodes",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), REJECTED)
def test_bad_created_clusters_are_rejected_naming_the_field(obj: Obj, expected: str) -> None:
    problems = errors(obj)
    assert any(expected in problem for problem in problems), problems


IMMUTABLE = [
    pytest.param(EKS, GKE, "spec.cluster.source", id="EKS to GKE"),
    pytest.param(EXISTING, EKS, "spec.cluster.source", id="Existing to EKS"),
    pytest.param(EKS, EXISTING, "spec.cluster.source", id="EKS to Existing"),
    pytest.param(
        EKS,
        edited(EKS, "spec.cluster.eks.region", "eu-west-1"),
        'spec.cluster.eks.region: Invalid value: "string": region is immutable',
        id="EKS region",
    ),
    pytest.param(
        EKS,
        edited(EKS, "spec.cluster.eks.providerConfigRef.name", "other"),
        "providerConfigRef is immutable",
        id="EKS credentials",
    ),
    pytest.param(
        GKE,
        edited(GKE, "spec.cluster.gke.project", "other-project"),
        "project is immutable",
        id="GKE project",
    ),
    pytest.param(
        GKE,
        edited(GKE, "spec.cluster.gke.network.subnetwork", "other"),
        "network is immutable",
        id="GKE network",
    ),
    # Adding or removing a block the field's own rule cannot see (no old or new value).
    pytest.param(
        EKS,
        edited(EKS, "spec.cluster.eks.network", EKS_SUBNETS),
        'spec.cluster.eks.network: Invalid value: "object": network is immutable',
        id="EKS network added",
    ),
    pytest.param(
        edited(EKS, "spec.cluster.eks.network", EKS_SUBNETS),
        EKS,
        "spec.cluster.eks.network: Invalid value",
        id="EKS network removed",
    ),
    pytest.param(
        EKS,
        edited(EKS, "spec.cluster.eks.zones", ["us-east-1c", "us-east-1d"]),
        "zones are immutable",
        id="EKS zones added",
    ),
    pytest.param(
        edited(EKS, "spec.cluster.eks.zones", ["us-east-1a", "us-east-1b"]),
        EKS,
        "spec.cluster.eks.zones: Invalid value",
        id="EKS zones removed",
    ),
    pytest.param(GKE, GKE_OWN_NETWORK, "network is immutable", id="GKE network removed"),
    pytest.param(GKE_OWN_NETWORK, GKE, "network is immutable", id="GKE network added"),
]


@pytest.mark.parametrize(("old", "new", "expected"), IMMUTABLE)
def test_an_update_may_not_move_a_cluster(old: Obj, new: Obj, expected: str) -> None:
    assert errors(new) == []
    problems = update_errors(old, new)
    assert any(expected in problem for problem in problems), problems
    if expected == "spec.cluster.source":
        assert any("source is immutable" in problem for problem in problems), problems


ALLOWED = [
    pytest.param(EKS, edited(EKS, "spec.cluster.eks.version", "1.35"), id="a version upgrade"),
    pytest.param(EKS, edited(EKS, "spec.nodePools.0.nodeCount", 5), id="a pool resize"),
    pytest.param(
        EKS,
        edited(EKS, "spec.nodePools", [*EKS["spec"]["nodePools"], GKE["spec"]["nodePools"][0]]),
        id="an added pool",
    ),
    pytest.param(GKE, deepcopy(GKE), id="no change"),
    pytest.param(
        GKE, edited(GKE, "spec.cluster.gke.zones", ["us-central1-a"]), id="GKE zones added"
    ),
]


@pytest.mark.parametrize(("old", "new"), ALLOWED)
def test_an_update_may_resize_and_upgrade(old: Obj, new: Obj) -> None:
    assert update_errors(old, new) == []


def test_transition_rules_do_not_run_on_create() -> None:
    """On create there is no old object: `self == oldSelf` is skipped, as the API server skips it."""
    assert errors(edited(EKS, "spec.cluster.eks.region", "eu-west-1")) == []
