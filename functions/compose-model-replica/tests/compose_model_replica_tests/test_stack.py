"""A replica on a cluster whose stack lacks what it needs says so on Serving, and lands
in the tenant namespace its cluster's tenancy names."""

from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import cluster, replica, role

LWS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "name": "leaderworkersets.leaderworkerset.x-k8s.io",
    "scope": "MultiNode",
}
GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "name": "gpu.nvidia.com",
    "scope": "DeviceClass",
}
KAI_QUEUE = {
    "apiVersion": "scheduling.run.ai/v2",
    "kind": "Queue",
    "name": "ml",
    "scope": "Namespace",
    "tenant": "ml",
}
OTHER_QUEUE = {**KAI_QUEUE, "name": "other", "tenant": "other"}
PODGROUP_CRD = {**LWS_CRD, "name": "podgroups.scheduling.x-k8s.io"}


def lacking(*missing: dict[str, Any], scheduling: dict[str, Any] | None = None) -> dict[str, Any]:
    obj = cluster(scheduling=scheduling)
    obj["status"]["stack"] = {"checked": 4, "missing": list(missing)}
    return obj


def serving(req: Any) -> dict[str, Any]:
    got = as_dict(run(FunctionRunner(), req))
    return next(c for c in got["conditions"] if c["type"] == "Serving")


KAI = {"provider": "KAI", "queue": "{{ .Namespace }}"}


@pytest.mark.parametrize(
    ("roles", "missing", "scheduling", "named"),
    [
        (
            {"workers": role(pipeline=2)},
            [LWS_CRD],
            None,
            "CustomResourceDefinition leaderworkersets.leaderworkerset.x-k8s.io",
        ),
        ({"workers": role()}, [GPU_CLASS], None, "DeviceClass gpu.nvidia.com"),
        ({"workers": role()}, [KAI_QUEUE, OTHER_QUEUE], KAI, "Queue ml"),
        (
            {"workers": role(pipeline=2)},
            [PODGROUP_CRD],
            {"provider": "Coscheduling"},
            "CustomResourceDefinition podgroups.scheduling.x-k8s.io",
        ),
    ],
    ids=["its LWS", "its DeviceClass", "its queue", "its gang object"],
)
def test_a_replica_names_what_its_cluster_lacks(
    roles: dict[str, Any], missing: list[dict[str, Any]], scheduling: Any, named: str
) -> None:
    req = request(
        replica(**roles),
        required={
            "inferencecluster": [lacking(*missing, scheduling=scheduling)],
            "priorityclasses": [],
        },
    )
    assert serving(req) == {
        "type": "Serving",
        "status": "STATUS_CONDITION_FALSE",
        "reason": "PrerequisitesMissing",
        "message": f"InferenceCluster a lacks {named}, which this replica needs",
        "target": "TARGET_COMPOSITE",
    }


@pytest.mark.parametrize(
    ("roles", "missing", "scheduling"),
    [
        ({"workers": role()}, [LWS_CRD], None),
        ({"workers": role()}, [OTHER_QUEUE], KAI),
        ({"workers": role(pipeline=2)}, [PODGROUP_CRD], None),
    ],
    ids=["single-node: no LWS", "another namespace's queue", "no gangs on Default"],
)
def test_what_it_does_not_need_is_not_its_business(
    roles: dict[str, Any], missing: list[dict[str, Any]], scheduling: Any
) -> None:
    req = request(
        replica(**roles),
        required={
            "inferencecluster": [lacking(*missing, scheduling=scheduling)],
            "priorityclasses": [],
        },
    )
    assert serving(req)["reason"] != "PrerequisitesMissing"


def test_the_workloads_land_where_the_clusters_tenancy_says() -> None:
    obj = cluster()
    obj["spec"]["tenancy"] = {
        "namespace": "serve-{{ .Namespace }}",
        "labels": {"pod-security.kubernetes.io/enforce": "baseline"},
    }
    got = as_dict(run(FunctionRunner(), request(replica(), required={"inferencecluster": [obj]})))
    assert got["desired"]["composite"]["resource"]["status"]["namespace"] == "serve-ml"
    namespace = got["desired"]["resources"]["namespace"]["resource"]["spec"]["forProvider"]
    assert namespace["manifest"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == (
        "baseline"
    )
    for key, composed in got["desired"]["resources"].items():
        if key != "namespace":
            manifest = composed["resource"]["spec"]["forProvider"]["manifest"]
            assert manifest["metadata"]["namespace"] == "serve-ml"


def test_a_tenancy_that_cannot_place_the_namespace_refuses_and_names_the_cluster() -> None:
    obj = cluster()
    obj["spec"]["tenancy"] = {"namespace": "{{ .Namespace }}_x"}
    got = as_dict(run(FunctionRunner(), request(replica(), required={"inferencecluster": [obj]})))
    (accepted,) = got["conditions"]
    assert accepted["status"] == "STATUS_CONDITION_FALSE"
    assert accepted["reason"] == "InvalidTenancy"
    assert accepted["message"].startswith(
        "spec.clusterName: InferenceCluster 'a' spec.tenancy.namespace: renders 'default_x'"
    )


KSERVE_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "name": "llminferenceservices.serving.kserve.io",
}


@pytest.mark.parametrize(
    ("recorded", "published", "held"),
    [
        ("Native", None, False),
        ("KServe", None, True),
        (None, None, True),
        # Placed before replicas recorded their backend: its published workloads say.
        (None, "Deployment", False),
        (None, "LLMInferenceService", True),
    ],
)
def test_a_replica_placed_before_a_backend_switch_needs_only_its_own_kind(
    recorded: str | None, published: str | None, held: bool
) -> None:
    """The cluster switched to KServe and is installing it: a replica still rendering
    its Deployment (until its replacement serves) does not need KServe's CRD, and keeps
    serving; one rendering an LLMInferenceService does (s-three F2)."""
    obj = replica()
    if recorded is not None:
        obj["metadata"]["annotations"] = {"modelplane.ai/backend": recorded}
    if published is not None:
        obj["status"] = {"workloads": [{"role": "workers", "kind": published, "name": "w"}]}
    on = lacking(KSERVE_CRD)
    on["spec"]["backend"] = {"type": "KServe"}
    req = request(obj, required={"inferencecluster": [on], "priorityclasses": []})
    assert (serving(req)["reason"] == "PrerequisitesMissing") is held
    if not held:
        # And it renders what it runs: its workload keeps its kind under its Object.
        got = as_dict(run(FunctionRunner(), req))
        manifest = got["desired"]["resources"]["workload-workers"]["resource"]["spec"]
        assert manifest["forProvider"]["manifest"]["kind"] == "Deployment"
