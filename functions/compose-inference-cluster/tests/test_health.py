"""Healthy: the cluster's Objects fail to sync for longer than the grace, against the
request's fixed now (the render clock), never the wall clock."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane.core.vocabulary import CONTEXT_NOW
from modelplane_cli.testing import as_dict, request, run

from .test_stack import OBSERVED_READY, REQUIRED, cluster

Obj = dict[str, Any]
UNREACHABLE = {
    "type": "Synced",
    "status": "False",
    "reason": "ReconcileError",
    "message": "connect failed: cannot create new client: dial tcp 10.0.0.1:443: i/o timeout",
    "lastTransitionTime": "2026-12-01T10:00:00Z",
}


def unreachable(body: Obj) -> Obj:
    return {**body, "status": {"conditions": [UNREACHABLE]}}


def healthy_condition(now: str, observed: dict[str, Obj]) -> Obj:
    req = request(cluster(), required=REQUIRED, observed=observed)
    req.context.update({CONTEXT_NOW: now})
    conditions = as_dict(run(FunctionRunner(), req))["conditions"]
    (found,) = [c for c in conditions if c["type"] == "Healthy"]
    return found


@pytest.mark.parametrize(
    ("now", "status", "reason"),
    [
        ("2026-12-01T10:04:59Z", "STATUS_CONDITION_UNKNOWN", "SyncFailing"),
        ("2026-12-01T10:05:00Z", "STATUS_CONDITION_FALSE", "ClusterUnreachable"),
    ],
)
def test_a_cluster_no_object_reaches_is_unhealthy_after_the_grace(
    now: str, status: str, reason: str
) -> None:
    observed = {key: unreachable(body) for key, body in OBSERVED_READY.items()}

    found = healthy_condition(now, observed)

    assert (found["status"], found["reason"]) == (status, reason)


def test_one_object_reaching_the_cluster_keeps_it_healthy() -> None:
    keys = sorted(OBSERVED_READY)
    observed = {k: unreachable(OBSERVED_READY[k]) for k in keys[1:]} | {
        keys[0]: OBSERVED_READY[keys[0]]
    }

    found = healthy_condition("2030-01-01T00:00:00Z", observed)

    assert (found["status"], found["reason"]) == ("STATUS_CONDITION_TRUE", "ClusterHealthy")
    assert found["message"] == f"1 of {len(keys)} Objects reach the cluster"
