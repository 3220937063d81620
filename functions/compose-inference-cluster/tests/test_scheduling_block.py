"""What compose-inference-cluster says of a cluster's spec.scheduling block: a bad
template or a gang API its Kubernetes version lacks is named on the cluster, and its
pools are still published."""

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .test_fn import GPU, H100_POOL, PUBLISHED_H100, cluster, inference_class

# Everything the cluster asks for, fetched: its class, no replicas, no Objects.
FETCHED = {
    "inferenceclass-h100-8x": [inference_class("h100-8x", [GPU])],
    "modelreplicas": [],
    "replica-objects": [],
}


def test_invalid_scheduling_block_is_reported_on_the_cluster() -> None:
    obj = cluster([H100_POOL])
    obj["spec"]["scheduling"] = {
        "provider": "KAI",
        "queue": "{{ .Namespace }}",
        "defaultLabels": {"team": "{{ .Tenant }}"},
    }
    req = request(obj, required=FETCHED)
    got = as_dict(run(FunctionRunner(), req))
    why = (
        "spec.scheduling.defaultLabels[team]: unknown variable .Tenant; only {{ .Namespace }}, "
        "{{ .Name }}, {{ .Replica }}, {{ .Cluster }}, {{ .Priority }} are allowed"
    )
    assert got["conditions"][1] == {
        "type": "SchedulingConfigured",
        "status": "STATUS_CONDITION_FALSE",
        "reason": "InvalidScheduling",
        "message": why,
        "target": "TARGET_COMPOSITE",
    }
    assert got["results"] == [
        {
            "severity": "SEVERITY_WARNING",
            "reason": "InvalidSchedulingTemplate",
            "message": why,
            "target": "TARGET_COMPOSITE",
        }
    ]
    # The pools are still published: a broken scheduling block blocks rendering, not placement.
    assert got["desired"]["composite"]["resource"]["status"]["gpuPools"] == [PUBLISHED_H100]


def test_a_queue_template_whose_every_rendering_is_invalid_is_refused() -> None:
    """Validated by what it renders: no cluster name can make `ñ...` a queue name."""
    obj = cluster([H100_POOL])
    obj["spec"]["scheduling"] = {"provider": "Kueue", "queue": "ñ{{ .Cluster }}"}
    req = request(obj, required=FETCHED)
    got = as_dict(run(FunctionRunner(), req))
    (configured,) = [c for c in got["conditions"] if c["type"] == "SchedulingConfigured"]
    assert configured["status"] == "STATUS_CONDITION_FALSE"
    assert configured["reason"] == "InvalidScheduling"
    assert configured["message"].startswith(
        "spec.scheduling.queue: every rendering of 'ñ{{ .Cluster }}' is refused, for example "
    ), configured["message"]
    assert [(r["severity"], r["reason"]) for r in got["results"]] == [
        ("SEVERITY_WARNING", "InvalidSchedulingTemplate")
    ]
    assert got["results"][0]["message"] == configured["message"]


@pytest.mark.parametrize(("version", "reason"), [("1.34", "GangAPIUnavailable"), ("1.35", None)])
def test_a_gang_api_the_version_lacks_is_named_on_the_cluster(
    version: str, reason: str | None
) -> None:
    obj = cluster([H100_POOL])
    obj["spec"]["kubernetesVersion"] = version
    obj["spec"]["scheduling"] = {"provider": "Default", "gang": {"api": "Workload"}}
    req = request(obj, required=FETCHED)
    got = as_dict(run(FunctionRunner(), req))
    (configured,) = [c for c in got["conditions"] if c["type"] == "SchedulingConfigured"]
    if reason is None:
        assert configured["reason"] == "SchedulingValid"
        assert got.get("results", []) == []
        return
    why = (
        "spec.scheduling.gang.api: Kubernetes 1.34 serves no scheduling.k8s.io Workload "
        "version Modelplane composes (1.35 to 1.37: 1.35 v1alpha1, 1.36 v1alpha2, "
        "1.37 v1beta1); its pods are not ganged"
    )
    # Valid (nothing is refused, nothing that runs changes), and says why not ganged.
    assert configured == {
        "type": "SchedulingConfigured",
        "status": "STATUS_CONDITION_TRUE",
        "reason": "GangAPIUnavailable",
        "message": f"scheduling conventions valid; {why} (1 warning)",
        "target": "TARGET_COMPOSITE",
    }
    assert got["results"] == [
        {
            "severity": "SEVERITY_WARNING",
            "reason": "GangAPIUnavailable",
            "message": why,
            "target": "TARGET_COMPOSITE",
        }
    ]


@pytest.mark.parametrize(
    ("block", "why"),
    [
        (
            {"defaultPriority": "system-cluster-critical"},
            "priority 'system-cluster-critical' is a system PriorityClass, never used for "
            "model pods",
        ),
        (
            {"defaultPriority": "gold", "allowedPriorities": ["silver"]},
            "default priority 'gold' is not in allowedPriorities",
        ),
    ],
    ids=["a system- PriorityClass", "outside allowedPriorities"],
)
def test_a_refused_default_priority_is_named_on_the_cluster(
    block: dict[str, object], why: str
) -> None:
    """The composing side of tests/scheduling/test_refused_default.py: the cluster says
    which field is refused; placement sends no deployment there that would take it."""
    obj = cluster([H100_POOL])
    obj["spec"]["scheduling"] = block
    req = request(obj, required=FETCHED)
    got = as_dict(run(FunctionRunner(), req))
    message = f"spec.scheduling.defaultPriority: {why}"
    (configured,) = [c for c in got["conditions"] if c["type"] == "SchedulingConfigured"]
    assert configured == {
        "type": "SchedulingConfigured",
        "status": "STATUS_CONDITION_FALSE",
        "reason": "InvalidScheduling",
        "message": message,
        "target": "TARGET_COMPOSITE",
    }
    assert got["results"] == [
        {
            "severity": "SEVERITY_WARNING",
            "reason": "InvalidScheduling",
            "message": message,
            "target": "TARGET_COMPOSITE",
        }
    ]
    assert got["desired"]["composite"]["resource"]["status"]["gpuPools"] == [PUBLISHED_H100]


def test_kai_podgrouper_modelplane_is_named_as_ignored_on_the_cluster() -> None:
    """KAI's podgrouper regroups every owned pod naming KAI's scheduler (no annotation
    opts one out), so `podGrouper: Modelplane` cannot give a replica a PodGroup of its
    own. The block stays valid, and the cluster says the setting does nothing."""
    obj = cluster([H100_POOL])
    obj["spec"]["scheduling"] = {"provider": "KAI", "kai": {"podGrouper": "Modelplane"}}
    req = request(obj, required=FETCHED)
    got = as_dict(run(FunctionRunner(), req))
    why = (
        "spec.scheduling.kai.podGrouper: KAI's podgrouper cannot be turned off for a "
        "workload: it regroups every owned pod that names KAI's scheduler and rewrites "
        "its pod-group-name, so a PodGroup Modelplane composed would stay empty. "
        "Modelplane composes none and KAI groups the pods, as with Automatic; a "
        "disaggregated replica's roles are not one gang"
    )
    (configured,) = [c for c in got["conditions"] if c["type"] == "SchedulingConfigured"]
    assert configured == {
        "type": "SchedulingConfigured",
        "status": "STATUS_CONDITION_TRUE",
        "reason": "SchedulingValid",
        "message": "scheduling conventions valid (1 warning)",
        "target": "TARGET_COMPOSITE",
    }
    assert got["results"] == [
        {
            "severity": "SEVERITY_WARNING",
            "reason": "SchedulingFieldIgnored",
            "message": why,
            "target": "TARGET_COMPOSITE",
        }
    ]
