"""A running workload keeps the Kueue labels Kueue refuses to change on it.

The replica is composed on a Kueue cluster, read back running (one ready replica),
and composed again after the platform changed the queue: the response keeps the
queue the workload runs with, warns why, and still carries every other change.
"""

import copy
from typing import Any

from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import cluster, replica

WORKLOAD = "workload-workers"
QUEUE = "kueue.x-k8s.io/queue-name"


def _kueue(queue: str) -> dict[str, Any]:
    return {
        "inferencecluster": [
            cluster(scheduling={"provider": "Kueue", "queue": queue}),
        ]
    }


def _running(first: dict[str, Any]) -> dict[str, Any]:
    """The workload's Object as provider-kubernetes reports it once applied, its
    Deployment read back with one ready replica."""
    obj = copy.deepcopy(first["desired"]["resources"][WORKLOAD]["resource"])
    read = copy.deepcopy(obj["spec"]["forProvider"]["manifest"])
    read["status"] = {"readyReplicas": 1, "replicas": 1}
    obj["status"] = {"atProvider": {"manifest": read}}
    return {WORKLOAD: obj}


def _composed(observed: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The workload's manifest and the SchedulingLabelKept results, composed over
    `observed` once the queue is `<namespace>-new`."""
    req = request(replica(), observed=observed, required=_kueue("{{ .Namespace }}-new"))
    got = as_dict(run(FunctionRunner(), req))
    manifest = got["desired"]["resources"][WORKLOAD]["resource"]["spec"]["forProvider"]["manifest"]
    kept = [r for r in got.get("results", []) if r.get("reason") == "SchedulingLabelKept"]
    return manifest, kept


def test_a_queue_change_waits_until_the_workload_has_no_ready_replica() -> None:
    first = as_dict(
        run(FunctionRunner(), request(replica(), required=_kueue("{{ .Namespace }}-old")))
    )
    observed = _running(first)
    manifest, kept = _composed(observed)
    assert manifest["metadata"]["labels"][QUEUE] == "ml-old"
    (warning,) = kept
    assert warning["severity"] == "SEVERITY_WARNING"
    assert f"keeps {QUEUE}=ml-old" in warning["message"]
    assert f"it takes {QUEUE}=ml-new once it has no ready replica" in warning["message"]

    # With no replica ready Kueue accepts the change: the workload moves.
    observed[WORKLOAD]["status"]["atProvider"]["manifest"]["status"]["readyReplicas"] = 0
    manifest, kept = _composed(observed)
    assert manifest["metadata"]["labels"][QUEUE] == "ml-new"
    assert kept == []
