"""Replicas on an unreachable cluster: not available (ReplicasReady does not count
them, their placements read serving false), replaced at once, kept until their
replacements serve, and routed to only while no replica on a reachable cluster serves
(review rev-gke-drain #2)."""

from typing import Any

import pytest

from .objects import A0, A1, B0, REVISION, as_running, cluster, decided, deployment
from .objects import replica as placed
from .test_endpoints import url, with_url
from .test_settled import fetch_loop

Obj = dict[str, Any]
UNREACHABLE = {
    "type": "Reachable",
    "status": "False",
    "reason": "ClusterUnreachable",
    "message": "none of 6 Objects has synced since 2026-12-01T10:00:00Z",
}


def fleet(reachable: bool) -> list[Obj]:
    a = cluster("a", 4)
    if not reachable:
        a["status"]["conditions"] = [UNREACHABLE]
    return [a, cluster("b", 4)]


def said(serving: str, reason: str, revision: str | None = REVISION) -> Obj:
    status: Obj = {"conditions": [{"type": "Serving", "status": serving, "reason": reason}]}
    if revision is not None:
        status["servingRevision"] = revision
    return status


SERVED = said("True", "WorkloadAvailable")
STRANDED = said("Unknown", "ClusterUnreachable")
NEVER_SERVED = said("Unknown", "ClusterUnreachable", "")
# A reconcile of the replica failed (compose-model-replica restarting): Crossplane wrote
# Unknown over Serving and kept the rest of the status, the revision of its last verdict.
FAILED_RECONCILE = said("Unknown", "FatalError")
FAILED_NOT_SERVING = said("Unknown", "FatalError", "")


def on(name: str, cluster_name: str, index: int, status: Obj) -> Obj:
    obj = with_url(placed(name, cluster_name, index), url(name, cluster_name))
    obj["status"] = {**status, "url": obj["status"]["url"]}
    return as_running(obj)


def reconcile(reachable: bool, observed: dict[str, Obj]) -> Obj:
    return fetch_loop([*fleet(reachable), *observed.values()], decided(deployment(2)), observed)[0]


def summary(rsp: Obj) -> Obj:
    """What the deployment says and routes: its replicas (and whether each is ready),
    its ModelEndpoints, its endpoint list, ReplicasReady."""
    resources = rsp["desired"]["resources"]
    status = rsp["desired"]["composite"]["resource"]["status"]
    (ready,) = [c for c in rsp["conditions"] if c["type"] == "ReplicasReady"]
    return {
        "replicas": sorted(
            (body["resource"]["spec"]["clusterName"], body.get("ready"))
            for body in resources.values()
            if body["resource"]["kind"] == "ModelReplica"
        ),
        "endpoints": sorted(k.removeprefix("endpoint-") for k in resources if "endpoint" in k),
        "listed": [(e["replica"], e["serving"]) for e in status["endpoints"]],
        "ready": (ready["status"], ready["message"]),
    }


NOT_READY, READY = "READY_FALSE", "READY_TRUE"
BOTH_ON_A = [("a", NOT_READY), ("a", NOT_READY), ("b", NOT_READY), ("b", NOT_READY)]


@pytest.mark.parametrize(
    ("reachable", "observed", "want"),
    [
        pytest.param(
            True,
            {A0: on(A0, "a", 0, SERVED), A1: on(A1, "a", 1, SERVED)},
            {
                "replicas": [("a", READY), ("a", READY)],
                "endpoints": sorted([A0, A1]),
                "listed": [(A0, True), (A1, True)],
                "ready": ("STATUS_CONDITION_TRUE", "2 of 2 replicas serving"),
            },
            id="reachable",
        ),
        pytest.param(
            # The cluster is unreachable, and its replicas have not said so yet.
            False,
            {A0: on(A0, "a", 0, SERVED), A1: on(A1, "a", 1, SERVED)},
            {
                "replicas": BOTH_ON_A,
                "endpoints": sorted([A0, A1]),
                "listed": [(A0, False), (A1, False)],
                "ready": ("STATUS_CONDITION_FALSE", "0 of 4 placed replicas serving (2 desired)"),
            },
            id="unreachable, the only replicas: replaced at once, still routed",
        ),
        pytest.param(
            False,
            {A0: on(A0, "a", 0, STRANDED), A1: on(A1, "a", 1, STRANDED)},
            {
                "replicas": BOTH_ON_A,
                "endpoints": sorted([A0, A1]),
                "listed": [(A0, False), (A1, False)],
                "ready": ("STATUS_CONDITION_FALSE", "0 of 4 placed replicas serving (2 desired)"),
            },
            id="Serving Unknown as last read serving: the same",
        ),
        pytest.param(
            False,
            {A0: on(A0, "a", 0, NEVER_SERVED), A1: on(A1, "a", 1, NEVER_SERVED)},
            {
                "replicas": [("b", NOT_READY), ("b", NOT_READY)],
                "endpoints": [],
                "listed": [],
                "ready": ("STATUS_CONDITION_FALSE", "0 of 2 replicas serving"),
            },
            id="never served there: nothing to keep",
        ),
        pytest.param(
            False,
            {
                A0: on(A0, "a", 0, STRANDED),
                A1: on(A1, "a", 1, STRANDED),
                B0: on(B0, "b", 0, SERVED),
            },
            {
                # The last placed goes first: a/1.
                "replicas": [("a", NOT_READY), ("b", NOT_READY), ("b", READY)],
                "endpoints": [B0],
                "listed": [(A0, False), (B0, True)],
                "ready": ("STATUS_CONDITION_FALSE", "1 of 3 placed replicas serving (2 desired)"),
            },
            id="one replacement serves: one stranded replica goes, routes leave the cluster",
        ),
        pytest.param(
            # A failed reconcile says nothing new: the replica serves as it last did.
            True,
            {A0: on(A0, "a", 0, SERVED), A1: on(A1, "a", 1, FAILED_RECONCILE)},
            {
                "replicas": [("a", READY), ("a", READY)],
                "endpoints": sorted([A0, A1]),
                "listed": [(A0, True), (A1, True)],
                "ready": ("STATUS_CONDITION_TRUE", "2 of 2 replicas serving"),
            },
            id="a serving replica's reconcile failed (FatalError): still ready and routed",
        ),
        pytest.param(
            True,
            {A0: on(A0, "a", 0, SERVED), A1: on(A1, "a", 1, FAILED_NOT_SERVING)},
            {
                "replicas": [("a", NOT_READY), ("a", READY)],
                "endpoints": [A0],
                "listed": [(A0, True), (A1, False)],
                "ready": ("STATUS_CONDITION_FALSE", "1 of 2 replicas serving"),
            },
            id="a replica that did not serve failed its reconcile: still not serving",
        ),
        pytest.param(
            # Seed 5039 of `bench faults --set kai`: read as not serving, the replica on
            # the reachable cluster lost its route and the stranded one was routed alone.
            False,
            {A0: on(A0, "a", 0, STRANDED), B0: on(B0, "b", 0, FAILED_RECONCILE)},
            {
                "replicas": [("a", NOT_READY), ("b", NOT_READY), ("b", READY)],
                "endpoints": [B0],
                "listed": [(A0, False), (B0, True)],
                "ready": ("STATUS_CONDITION_FALSE", "1 of 3 placed replicas serving (2 desired)"),
            },
            id="failover: a replica elsewhere whose reconcile failed still takes the routes",
        ),
    ],
)
def test_replicas_on_an_unreachable_cluster(
    reachable: bool, observed: dict[str, Obj], want: Obj
) -> None:
    got = summary(reconcile(reachable, observed))

    assert got == want
