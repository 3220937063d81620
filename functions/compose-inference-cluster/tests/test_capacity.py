"""status.capacity: pools' declared and committed devices, and the quota and usage of the
in-cluster queues the replicas here go to, read from the Observe-only Objects."""

from typing import Any

from compose_inference_cluster.fn import FunctionRunner

from modelplane_cli.schema import ManifestValidator
from modelplane_dev.testing import as_dict, request, run

from .stack_objects import READY, REQUIRED, cluster, placed

Obj = dict[str, Any]
KAI = {"provider": "KAI", "queue": "{{ .Namespace }}"}
KUEUE = {"provider": "Kueue", "queue": "{{ .Namespace }}-gpu"}


def reporting(manifest: Obj) -> Obj:
    """An Observe-only Object that found `manifest` on the cluster."""
    return {"status": {**READY["status"], "atProvider": {"manifest": manifest}}}


def compose(scheduling: Obj, replicas: list[Obj], observed: dict[str, Obj]) -> Obj:
    req = request(
        cluster(scheduling=scheduling),
        required={**REQUIRED, "modelreplicas": replicas},
        observed=observed,
    )
    return as_dict(run(FunctionRunner(), req))


def test_pools_count_what_the_replicas_here_claim() -> None:
    got = compose(KAI, [placed("chat-1", pipeline=2), placed("chat-2", "team-b")], {})

    capacity = got["desired"]["composite"]["resource"]["status"]["capacity"]
    assert capacity["pools"] == [
        {"name": "h100", "nodes": 2, "devices": {"gpu": {"total": 16, "committed": 24}}}
    ]
    # The queues are observed, but have reported nothing yet: no queue information.
    assert capacity["queues"] == []


def test_a_kai_queue_reports_its_gpu_quota_and_non_preemptible_usage() -> None:
    queue = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {"resources": {"gpu": {"quota": 16, "limit": -1}}},
        "status": {"allocatedNonPreemptible": {"nvidia.com/gpu": "8", "cpu": "4"}},
    }
    got = compose(KAI, [placed("chat-1")], {"observe-queue-team-a": reporting(queue)})

    assert got["desired"]["composite"]["resource"]["status"]["capacity"]["queues"] == [
        {
            "name": "team-a",
            "provider": "KAI",
            "namespaces": ["team-a"],
            "gpu": {"quota": 16, "used": 8},
        }
    ]


def test_a_kueue_local_queue_is_followed_to_its_cluster_queue(
    manifest_validator: ManifestValidator,
) -> None:
    local_key = "observe-localqueue-mp-team-a-team-a-gpu"
    local = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a-gpu", "namespace": "mp-team-a"},
        "spec": {"clusterQueue": "gpus"},
    }
    first = compose(KUEUE, [placed("chat-1")], {local_key: reporting(local)})
    composed = first["desired"]["resources"]["observe-clusterqueue-gpus"]["resource"]
    assert manifest_validator.validate(composed) == []
    assert composed["spec"]["managementPolicies"] == ["Observe"]
    assert composed["spec"]["forProvider"]["manifest"] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "gpus"},
    }
    cluster_queue = {
        **composed["spec"]["forProvider"]["manifest"],
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "h100",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 32}],
                        }
                    ],
                }
            ]
        },
        "status": {
            "flavorsReservation": [
                {"name": "h100", "resources": [{"name": "nvidia.com/gpu", "total": "24"}]}
            ]
        },
    }
    observed = {local_key: reporting(local), "observe-clusterqueue-gpus": reporting(cluster_queue)}

    got = compose(KUEUE, [placed("chat-1")], observed)

    assert got["desired"]["composite"]["resource"]["status"]["capacity"]["queues"] == [
        {
            "name": "gpus",
            "provider": "Kueue",
            "namespaces": ["team-a"],
            "gpu": {"quota": 32, "used": 24},
        }
    ]
