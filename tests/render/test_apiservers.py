"""The workload clusters' API servers: which version answers, and in what words."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.render.apiservers import Answer, WorkloadApiServers, kubernetes_version
from modelplane_cli.render.world import World

Obj = dict[str, Any]
CLAIM_TEMPLATE: Obj = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "devices", "namespace": "mp-team-a"},
    "spec": {
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}
                ]
            }
        }
    },
}


def _world(version: str | None, spec: Obj | None = None) -> World:
    cluster: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "old", "uid": "u-1"},
        "spec": {} if version is None else {"kubernetesVersion": version},
    }
    cluster["spec"].update(spec or {})
    config: Obj = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {
            "name": "old",
            "ownerReferences": [
                {
                    "apiVersion": "modelplane.ai/v1alpha1",
                    "kind": "InferenceCluster",
                    "name": "old",
                    "uid": "u-1",
                    "controller": True,
                }
            ],
        },
    }
    return World([cluster, config])


def _object(manifest: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "o", "namespace": "team-a"},
        "spec": {
            "forProvider": {"manifest": manifest},
            "providerConfigRef": {"name": "old", "kind": "ClusterProviderConfig"},
            **spec,
        },
    }


def test_the_version_is_the_inference_cluster_s_that_composed_the_provider_config() -> None:
    assert kubernetes_version(_world("1.33"), {"name": "old", "kind": "ClusterProviderConfig"}) == (
        "1.33"
    )
    assert kubernetes_version(_world(None), {"name": "old", "kind": "ClusterProviderConfig"}) == (
        "1.34"
    )
    assert kubernetes_version(World(), {"name": "gone"}) == "1.34"


def _eks(version: str | None) -> Obj:
    eks: Obj = {"region": "us-east-1", "providerConfigRef": {"name": "aws"}}
    if version is not None:
        eks["version"] = version
    return {
        "cluster": {"source": "EKS", "eks": eks},
        "nodePools": [{"name": "h100", "className": "h100", "nodeCount": 1}],
    }


@pytest.mark.parametrize(
    ("declared", "cloud", "runs"),
    [("1.34", "1.36", "1.36"), ("1.36", "1.34", "1.34"), ("1.35", None, "1.35")],
)
def test_a_created_cluster_is_checked_at_the_version_its_cloud_runs(
    declared: str, cloud: str | None, runs: str
) -> None:
    """Strict validation of core kinds follows the EKS sub-block's version when it is set
    (modelplane.provisioning.kubernetes_version), not spec.kubernetesVersion."""
    world = _world(declared, _eks(cloud))
    assert kubernetes_version(world, {"name": "old", "kind": "ClusterProviderConfig"}) == runs


def test_a_cluster_too_old_for_an_api_refuses_it_as_its_api_server_would() -> None:
    servers = WorkloadApiServers([])

    assert servers.apply(_world("1.34"), _object(CLAIM_TEMPLATE)) == Answer()
    assert servers.apply(_world("1.33"), _object(CLAIM_TEMPLATE)) == Answer(
        rejected='no matches for kind "ResourceClaimTemplate" in version "resource.k8s.io/v1"'
    )


def test_without_crds_a_custom_resource_is_taken_as_given_and_named() -> None:
    lws: Obj = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet"}

    answer = WorkloadApiServers(None).apply(_world("1.34"), _object(lws))

    assert answer == Answer(unchecked="LeaderWorkerSet.leaderworkerset.x-k8s.io")


def test_an_observe_only_object_writes_nothing_and_is_not_checked() -> None:
    broken = {**CLAIM_TEMPLATE, "spec": {"nonsense": True}}

    answer = WorkloadApiServers([]).apply(
        _world("1.34"), _object(broken, managementPolicies=["Observe"])
    )

    assert answer == Answer()


def _deployment(container: Obj) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "mp-team-a"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [container]}},
        },
    }


@pytest.mark.parametrize(
    ("container", "message"),
    [
        (
            {"name": "e", "image": "i", "resources": {"limits": {"memory": "lots"}}},
            'Deployment in version "v1" cannot be handled as a Deployment: quantities must '
            "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            {"name": "e", "image": "i", "gpus": 8},
            'Deployment in version "v1" cannot be handled as a Deployment: strict decoding '
            'error: unknown field "spec.template.spec.containers[0].gpus"',
        ),
        (
            {"name": "e", "image": "i", "imagePullPolicy": "Sometimes"},
            'Deployment.apps "web" is invalid: spec.template.spec.containers[0].imagePullPolicy: '
            'UnsupportedValueError value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
        ),
        (
            {"name": "e", "imagePullPolicy": "Sometimes"},
            'Deployment.apps "web" is invalid: [spec.template.spec.containers[0].image: Required '
            "value, spec.template.spec.containers[0].imagePullPolicy: UnsupportedValueError value: "
            '"Sometimes": supported values: "Always", "IfNotPresent", "Never"]',
        ),
    ],
    ids=["undecodable quantity", "strict unknown field", "invalid", "several"],
)
def test_the_api_server_s_words(container: Obj, message: str) -> None:
    answer = WorkloadApiServers([]).apply(_world("1.34"), _object(_deployment(container)))

    assert answer == Answer(rejected=message)
