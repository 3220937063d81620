"""A replica on a cluster that is not Reachable: Serving reads Unknown (ClusterUnreachable),
with its last verdict in the message and, when that verdict was True, its revision in
status.servingRevision; everything it composes stays (review rev-gke-drain #2)."""

import copy
from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import REPLICA, cluster
from .test_applied import NEW, applied, observed, stale, want

Obj = dict[str, Any]


def with_reachable(status: str | None) -> dict[str, list[Obj]]:
    found = cluster()
    if status is not None:
        found["status"]["conditions"] = [
            {"type": "Reachable", "status": status, "reason": "ClusterUnreachable"}
        ]
    return {"inferencecluster": [found]}


def unknown(message: str) -> Obj:
    return {
        "type": "Serving",
        "status": "STATUS_CONDITION_UNKNOWN",
        "reason": "ClusterUnreachable",
        "message": "InferenceCluster a is unreachable (Reachable=False), so whether this "
        f"replica serves is not known; as last read: {message}",
        "target": "TARGET_COMPOSITE",
    }


def served(response: Obj) -> Obj:
    return response


def swapped(serving: Obj, revision: str) -> Any:
    def change(response: Obj) -> Obj:
        out = copy.deepcopy(response)
        out["conditions"] = [c for c in out["conditions"] if c["type"] != "Serving"] + [serving]
        out["desired"]["composite"]["resource"]["status"]["servingRevision"] = revision
        return out

    return change


@pytest.mark.parametrize(
    ("reachable", "read_back", "expect"),
    [
        pytest.param(None, applied, served, id="not reported: as before"),
        pytest.param("Unknown", applied, served, id="within the grace: as before"),
        pytest.param(
            "False",
            applied,
            swapped(unknown(f"Deployment {REPLICA}-workers is Available"), "rev-2"),
            id="unreachable, last read serving",
        ),
    ],
)
def test_serving_on_an_unreachable_cluster(
    reachable: str | None, read_back: Any, expect: Any
) -> None:
    got = as_dict(
        run(
            FunctionRunner(),
            request(NEW, observed=observed(read_back), required=with_reachable(reachable)),
        )
    )

    assert got == expect(want())


def test_last_read_not_serving_publishes_no_revision() -> None:
    got = as_dict(
        run(
            FunctionRunner(),
            request(NEW, observed=observed(stale), required=with_reachable("False")),
        )
    )

    (serving,) = [c for c in got["conditions"] if c["type"] == "Serving"]
    assert (serving["status"], serving["reason"]) == (
        "STATUS_CONDITION_UNKNOWN",
        "ClusterUnreachable",
    )
    assert "as last read: workload-workers: the change is not applied" in serving["message"]
    assert got["desired"]["composite"]["resource"]["status"]["servingRevision"] == ""
