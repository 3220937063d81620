"""compose-inference-cluster's serving stack, as whole responses: Releases in order,
Usages, observed prerequisites, StackReady and TenancyConfigured, and bad input
that keeps everything composed before."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run, run_over_grpc

from .stack_objects import (
    ABSENT,
    DRA_DRIVER,
    HELM_PC,
    INSTALLED_BEFORE_DRIVER,
    KUBERNETES_PC,
    LWS,
    LWS_CRD,
    MANAGED,
    NAME,
    NFD,
    OBSERVED_READY,
    OBSERVERS,
    REQUIRED,
    SCHEDULER_PLUGINS,
    SYSTEM,
    Obj,
    cluster,
    composed,
    condition,
    response,
    usage,
)

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
    "envoyAiGateway, envoyGateway, kai, kserve, kueue, leaderWorkerSet, nodeFeatureDiscovery, "
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
            "are certManager, envoyAiGateway, envoyGateway, kai, kserve, kueue, leaderWorkerSet, "
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
