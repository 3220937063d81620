"""compose-model-deployment: whole-response tests, table-driven."""

from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.vocabulary import CONTEXT_MATCH_TRACE
from modelplane_dev.testing import as_dict, request, run, run_over_grpc

from .asked import fetched, narrow_fetched, narrow_requirements, requirements
from .objects import (
    A0,
    A1,
    ALL_ACCEPTED,
    B0,
    FLEET,
    RELABELLED,
    REVISION,
    SCHEDULED_3,
    STEADY_STATE,
    asking,
    cluster,
    composed,
    condition,
    decided,
    deployment,
    event,
    observed_in_namespace,
    placement,
    replica,
    response,
    revision_of,
    traced_before,
)

# Twelve clusters too small for the deployment: every one is turned down alike.
SMALL = [cluster(f"c{i:02d}", 1) for i in range(12)]
FULL = "not enough free capacity for a replica"
NO_ROOM = "not enough free devices: needs 8 pods of {gpu 8}; free: 1 node with gpu 8/8"
UNSCHEDULED = (
    "0 of 1 replicas scheduled: no room for more on the 12 eligible clusters; "
    "0/12 clusters available: 12 InsufficientCapacity"
)


def _unscheduled(listed: int, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """The response for one replica on SMALL: two grouped rows naming `listed` clusters."""
    names = [f"c{i:02d}" for i in range(listed)]
    row = {"cluster": "c00", "clusters": 12, "clusterNames": names}
    want = response(
        status={
            "replicas": {"total": 0, "ready": 0},
            "placements": [],
            "matchTrace": [
                {**row, "reason": "InsufficientCapacity", "message": FULL},
                {**row, "pool": "h100", "reason": "InsufficientCapacity", "message": NO_ROOM},
            ],
            "endpoints": [],
        },
        conditions=[
            condition("ReplicasScheduled", False, "InsufficientCapacity", UNSCHEDULED),
            condition("ReplicasReady", False, "ReplicasNotReady", "0 of 1 replicas serving"),
            ALL_ACCEPTED,
        ],
        results=[event("WARNING", "InsufficientCapacity", UNSCHEDULED)],
        composite_ready="READY_FALSE",
        wanted=1,
        revision=revision_of(deployment(1, pipeline=8)),
        asked=requirements(*(f"c{i:02d}" for i in range(12))),
        of=deployment(1, pipeline=8),
    )
    want["context"] = context or {}
    return want


def _traced(req: fnv1.RunFunctionRequest, *deployments: str) -> fnv1.RunFunctionRequest:
    """What `modelplane render --trace` sends: the deployments to trace in the context."""
    req.context.update({CONTEXT_MATCH_TRACE: list(deployments)})
    return req


SERVING_AT = {A0: ("a", 0), A1: ("a", 1), B0: ("b", 0)}
SERVING = {
    key: observed_in_namespace(replica(key, cluster_name, index, serving=True))
    for key, (cluster_name, index) in SERVING_AT.items()
}
# A settled deployment whose narrow decision would change something: its own
# clusters and the fleet, as the wide path asks once its cluster list is in.
WIDENED = {
    "resources": {
        **narrow_requirements("a", "b")["resources"],
        **requirements("a", "b")["resources"],
    }
}

DRAINED = cluster("a", 2)
DRAINED["spec"]["taints"] = [{"key": "example.com/drain", "effect": "NoExecute"}]
ON_DRAINED = {A0: SERVING[A0]}
NOWHERE = (
    "the 1 selected cluster is tainted, unreachable, lacking prerequisites its replicas "
    "need or unable to run them (see the match trace); keeping 1 existing replica as "
    "recorded and placing nothing new; 0/1 clusters available: 1 Tainted"
)


def _held_on_drained() -> dict[str, Any]:
    """Its only cluster drained and nowhere else to go: the serving replica is held where
    it runs, but it must move, so it is not updated and the rollout is stalled."""
    want = response(
        resources={A0: composed(SERVING[A0], ready=True)},
        status={
            "replicas": {"total": 1, "ready": 1},
            "updatedReplicas": 0,
            "placements": [placement(A0, "a", 0, serving=True)],
            "matchTrace": [
                {
                    "cluster": "a",
                    "reason": "Tainted",
                    "message": "the cluster is tainted example.com/drain:NoExecute, not tolerated",
                }
            ],
            "endpoints": [],
        },
        conditions=[
            condition("ReplicasScheduled", False, "InsufficientCapacity", NOWHERE),
            condition("ReplicasReady", True, "AllReplicasReady", "1 of 1 replicas serving"),
            ALL_ACCEPTED,
        ],
        results=[event("WARNING", "InsufficientCapacity", NOWHERE)],
        asked={
            "resources": {**narrow_requirements("a")["resources"], **requirements("a")["resources"]}
        },
        of=deployment(1),
    )
    want["conditions"][-1] = condition(
        "Progressing",
        False,
        "RolloutStalled",
        f"0 of 1 replicas run revision {revision_of(deployment(1))}; no selected cluster "
        f"admits a replacement for {A0}, which must move, so every replica is held (see "
        "ReplicasScheduled)",
    )
    return want


OUTDATED = observed_in_namespace(replica(A0, "a", 0, serving=True, revision="0ld0ld0ld0"))
# The deployment just edited: its status still records the spec before the edit.
EDITED = {**deployment(1), "status": traced_before(deployment(1, pipeline=8), [])["status"]}
SURGED = "1 of 1 replicas scheduled across 1 cluster, and 1 more while a rollout replaces old ones"


def _surging() -> dict[str, Any]:
    """A template change surges one replica beside the outdated one, which serves on: two
    placed for one desired, and ReplicasReady counts the placed, since one does not serve.
    The edit is decided over the whole fleet from the first call: the status records
    the spec before it (`status.matchTraceSpec`)."""
    want = response(
        resources={
            A0: composed(OUTDATED, ready=True),
            A1: composed(replica(A1, "a", 1), ready=False),
        },
        status={
            "replicas": {"total": 2, "ready": 1},
            "updatedReplicas": 1,
            "placements": [placement(A0, "a", 0, serving=True), placement(A1, "a", 1)],
            "matchTrace": [],
            "endpoints": [],
        },
        conditions=[
            condition("ReplicasScheduled", True, "AllReplicasScheduled", SURGED),
            condition(
                "ReplicasReady",
                False,
                "ReplicasNotReady",
                "1 of 2 placed replicas serving (1 desired)",
            ),
            ALL_ACCEPTED,
        ],
        results=[event("NORMAL", "ReplicaPlaced", f"Placed replica {A1} on cluster a (pool h100)")],
        of=deployment(1),
    )
    want["conditions"][-1] = condition(
        "Progressing",
        True,
        "RollingUpdate",
        f"1 of 1 replicas run revision {REVISION}; 1 replica to go; waiting for {A1} to serve",
    )
    return want


CASES = [
    pytest.param(
        request(deployment(3)),
        # The clusters first: the replicas are listed per cluster fetched.
        asking(requirements()),
        id="fleet not fetched yet: nothing decided",
    ),
    pytest.param(
        request(deployment(3), required=fetched(FLEET, [])),
        response(
            resources={
                A0: composed(replica(A0, "a", 0), ready=False),
                A1: composed(replica(A1, "a", 1), ready=False),
                B0: composed(replica(B0, "b", 0), ready=False),
            },
            status={
                "replicas": {"total": 3, "ready": 0},
                "placements": [placement(A0, "a", 0), placement(A1, "a", 1), placement(B0, "b", 0)],
                "matchTrace": [],
                "endpoints": [],
            },
            conditions=[
                SCHEDULED_3,
                condition("ReplicasReady", False, "ReplicasNotReady", "0 of 3 replicas serving"),
                ALL_ACCEPTED,
            ],
            results=[
                event("NORMAL", "ReplicaPlaced", f"Placed replica {A0} on cluster a (pool h100)"),
                event("NORMAL", "ReplicaPlaced", f"Placed replica {A1} on cluster a (pool h100)"),
                event("NORMAL", "ReplicaPlaced", f"Placed replica {B0} on cluster b (pool h100)"),
            ],
        ),
        id="spread across clusters, packing a only where b is full",
    ),
    pytest.param(
        request(
            traced_before(deployment(3), []),
            required=narrow_fetched(FLEET, list(SERVING.values())),
            observed=SERVING,
        ),
        # Settled: only its own clusters, by name, and the replicas on them.
        STEADY_STATE,
        id="steady state: retained, serving, no events",
    ),
    pytest.param(
        request(traced_before(deployment(3), []), observed=SERVING),
        asking(narrow_requirements("a", "b")),
        id="settled, nothing fetched: asks for its own clusters only, on the first call",
    ),
    pytest.param(
        request(
            traced_before(deployment(3), []),
            required={
                **narrow_fetched([cluster("a", 4)], list(SERVING.values())),
                "inferenceclusters/b": [],
                "modelreplicas/b": [],
            },
            observed=SERVING,
        ),
        # b is gone: the narrow decision would let B0 go and place anew, so it widens,
        # asking for the fleet (this answer is not kept: the fleet is not in yet).
        asking(WIDENED),
        id="settled, its cluster gone: widens to the fleet on the same call",
    ),
    pytest.param(
        request(
            traced_before(deployment(3), []),
            required={
                **narrow_fetched(FLEET, list(SERVING.values())),
                **fetched(FLEET, list(SERVING.values())),
            },
            observed=SERVING,
        ),
        # Once the fleet is carried the call stays wide: same requirements (the loop
        # ends), the decision made over the fleet, its trace recomputed.
        {**STEADY_STATE, "requirements": WIDENED},
        id="settled, the fleet carried: decides wide and asks the same (fixpoint)",
    ),
    pytest.param(
        request(
            decided(deployment(1)),
            required={
                **narrow_fetched([DRAINED], [SERVING[A0]]),
                **fetched([DRAINED], [SERVING[A0]]),
            },
            observed=ON_DRAINED,
        ),
        _held_on_drained(),
        id="held where it must move: not updated, the rollout stalled, naming it",
    ),
    pytest.param(
        request(
            EDITED,
            required=fetched(FLEET, [OUTDATED]),
            observed={A0: OUTDATED},
        ),
        _surging(),
        id="a surge: ReplicasReady counts the placed replicas, not the desired",
    ),
    pytest.param(
        request(
            traced_before(deployment(3), []),
            required=narrow_fetched(FLEET, list(RELABELLED.values())),
            observed=RELABELLED,
        ),
        # Each replica keeps its (cluster, index) and its name; the labels come back.
        STEADY_STATE,
        id="labels edited by hand move nothing: identity is Crossplane's and the spec's",
    ),
    pytest.param(
        request(deployment(0), required=fetched(FLEET, [])),
        response(
            status={
                "replicas": {"total": 0, "ready": 0},
                "placements": [],
                "matchTrace": [],
                "endpoints": [],
            },
            conditions=[
                condition(
                    "ReplicasScheduled", True, "AllReplicasScheduled", "no replicas requested"
                ),
                condition("ReplicasReady", True, "AllReplicasReady", "0 of 0 replicas serving"),
                ALL_ACCEPTED,
            ],
            of=deployment(0),
        ),
        id="replicas 0 is valid",
    ),
    pytest.param(
        request(deployment(1, pipeline=8), required=fetched(SMALL)),
        # Until the replicas on the clusters fetched are in, nothing is decided; it
        # asks for them, one list per cluster:
        asking(requirements(*(f"c{i:02d}" for i in range(12)))),
        id="clusters fetched, replicas not yet: nothing decided",
    ),
    pytest.param(
        request(deployment(1, pipeline=8), required=fetched(SMALL, [])),
        _unscheduled(10),
        id="a row for 12 clusters names the first 10 and counts all 12",
    ),
    pytest.param(
        _traced(
            request(
                deployment(1, pipeline=8),
                required=fetched(SMALL, []),
            ),
            "ml/other",
            "ml/kimi",
        ),
        _unscheduled(12, {CONTEXT_MATCH_TRACE: ["ml/other", "ml/kimi"]}),
        id="render --trace asks for every cluster of this deployment's rows",
    ),
    pytest.param(
        _traced(
            request(
                deployment(1, pipeline=8),
                required=fetched(SMALL, []),
            ),
            "ml/other",
        ),
        _unscheduled(10, {CONTEXT_MATCH_TRACE: ["ml/other"]}),
        id="render --trace of another deployment leaves this one's rows capped",
    ),
]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_compose(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


@pytest.mark.parametrize(("req", "want"), CASES)
def test_same_response_over_grpc(req: Any, want: dict[str, Any]) -> None:
    """Served over a real gRPC channel on loopback, the function answers exactly as in-process."""
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want
