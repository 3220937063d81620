"""What a deployment reports and keeps in the harder cases: a selector that does not
compile, nothing that fits, capacity another team uses, a replica refused by its
cluster, a cluster that has not published its pools yet, and ReplicasReady's rule
and words."""

import pytest
from compose_model_deployment.fn import FunctionRunner
from compose_model_deployment.statuses import ready_condition

from modelplane_dev.fuzz import final_response
from modelplane_dev.testing import as_dict, request, run

from .asked import fetched, widened
from .objects import (
    A0,
    A1,
    B0,
    FLEET,
    cluster,
    condition,
    deployment,
    observed_in_namespace,
    replica,
)


def test_bad_selector_keeps_running_replicas() -> None:
    """A selector that does not compile holds every replica exactly as it runs."""
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    req = request(
        deployment(2, selector="device.attributes[ == 1"),
        required=widened(FLEET, list(running.values())),
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == [A0, B0]
    for name, obj in running.items():
        kept = got["desired"]["resources"][name]["resource"]
        assert kept["spec"] == obj["spec"]
        assert kept["metadata"]["name"] == name
    scheduled = got["conditions"][0]
    assert scheduled["type"] == "ReplicasScheduled"
    assert scheduled["status"] == "STATUS_CONDITION_FALSE"
    assert scheduled["reason"] == "InvalidNodeSelector"
    assert "spec.nodeSelector.devices[0].selectors[0].cel" in scheduled["message"]
    warnings = [r for r in got["results"] if r["severity"] == "SEVERITY_WARNING"]
    assert [w["reason"] for w in warnings] == ["InvalidNodeSelector"]


def test_nothing_fits_is_not_ready() -> None:
    """With replicas wanted and none placed, the deployment must not look Available."""
    req = request(deployment(1, pipeline=8), required=fetched(FLEET, []))
    got = as_dict(run(FunctionRunner(), req))
    assert got["desired"]["composite"]["ready"] == "READY_FALSE"
    assert "resources" not in got["desired"]
    assert got["conditions"][0]["reason"] == "InsufficientCapacity"
    trace = got["desired"]["composite"]["resource"]["status"]["matchTrace"]
    # Both clusters are too small for 8 pipeline stages: each is rejected as a
    # whole (for the same reason, so the trace says it once for both) and through
    # its one pool (of a different size on each); a unified deployment's entries
    # carry no role.
    assert [(e["cluster"], e.get("clusters"), e.get("pool"), e["reason"]) for e in trace] == [
        ("a", 2, None, "InsufficientCapacity"),
        ("a", None, "h100", "InsufficientCapacity"),
        ("b", None, "h100", "InsufficientCapacity"),
    ]
    assert all("role" not in e and e["message"] for e in trace)
    assert got["conditions"][0]["message"].endswith(
        "; 0/2 clusters available: 2 InsufficientCapacity"
    )


def test_other_deployments_use_capacity() -> None:
    """Cluster b's two nodes are taken by another team's replica, so all three land on a..."""
    other = observed_in_namespace(replica("other-0", "b", 0))
    other["metadata"]["namespace"] = "team-b"
    other["metadata"]["labels"]["modelplane.ai/deployment"] = "other"
    other["spec"]["deploymentName"] = "other"
    req = request(deployment(3), required=fetched(FLEET, [other]))
    got = as_dict(run(FunctionRunner(), req))
    clusters = [
        p["cluster"] for p in got["desired"]["composite"]["resource"]["status"]["placements"]
    ]
    # ...but a holds only two (4 nodes, 2 per replica): the third does not fit anywhere.
    assert clusters == ["a", "a"]
    assert got["conditions"][0]["reason"] == "InsufficientCapacity"


def test_a_replica_refused_by_its_cluster_shows_on_the_deployment() -> None:
    refused = observed_in_namespace(replica(B0, "b", 0, serving=True))
    refused["status"]["conditions"].append(
        {
            "type": "Accepted",
            "status": "False",
            "reason": "InvalidSchedulingTemplate",
            "message": "spec.scheduling.queue: renders to an invalid label value",
        }
    )
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        A1: observed_in_namespace(replica(A1, "a", 1, serving=True)),
        B0: refused,
    }
    req = request(deployment(3), required=fetched(FLEET, []), observed=running)
    # The answer Crossplane keeps: its own clusters are asked for by name too.
    got = as_dict(final_response(FunctionRunner(), req))
    assert got["conditions"][2] == condition(
        "ReplicasAccepted",
        False,
        "ReplicasNotAccepted",
        f"{B0}: InvalidSchedulingTemplate: spec.scheduling.queue: renders to an invalid label value",
    )
    # Still serving what it ran before: the replica stays, and counts as ready.
    assert got["desired"]["composite"]["resource"]["status"]["replicas"] == {"total": 3, "ready": 3}


def test_a_cluster_that_has_not_published_its_pools_keeps_its_replicas() -> None:
    """A restored or re-created InferenceCluster has spec.nodePools but no status yet:
    its hardware is not gone, so the replica on it must not be dropped."""
    restored = {**cluster("b", 2)}
    del restored["status"]
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    req = request(
        deployment(2),
        required=fetched([cluster("a", 4), restored], []),
        observed=running,
    )
    got = as_dict(final_response(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == sorted([A0, B0])
    kept = got["desired"]["resources"][B0]["resource"]
    assert kept["spec"] == running[B0]["spec"]


@pytest.mark.parametrize(
    ("ready", "placed", "wanted", "status", "message"),
    [
        (2, 2, 2, True, "2 of 2 replicas serving"),
        (1, 1, 2, False, "1 of 2 replicas serving"),
        (2, 3, 2, False, "2 of 3 placed replicas serving (2 desired)"),
        # A surge whose replacement already serves: every placed replica serves.
        (3, 3, 2, True, "3 of 3 placed replicas serving (2 desired)"),
        (0, 0, 0, True, "0 of 0 replicas serving"),
    ],
)
def test_replicas_ready_says_what_its_rule_checks(
    ready: int, placed: int, wanted: int, status: bool, message: str
) -> None:
    """True when every placed replica serves and at least as many as wanted are placed."""
    got = ready_condition(ready, placed, wanted)
    assert (got.status, got.message) == (status, message)
