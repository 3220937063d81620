"""compose-model-deployment: priority under contention, whole responses.

A higher-priority deployment may take capacity from lower-priority replicas that
are not serving yet; those yield in their own deployment's reconcile; a serving
replica is never displaced; unfetched PriorityClasses are no priority information.
"""

from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run, run_over_grpc

from .asked import fetched, narrow_fetched, narrow_requirements, requirements
from .objects import (
    A0,
    ALL_ACCEPTED,
    B0,
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
)

PRIORITY_CLASSES = [
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    for name, value in (("critical", 1000), ("batch", 10))
]
ONE_CLUSTER = [cluster("a", 2)]
TWO_CLUSTERS = [cluster("a", 2), cluster("b", 2)]


def with_priority(obj: dict[str, Any], priority: str) -> dict[str, Any]:
    """`obj` at `priority`; a replica then records the revision of a deployment at it."""
    obj["spec"]["priority"] = priority
    if obj["kind"] == "ModelReplica":
        at_priority = revision_of(with_priority(deployment(1), priority))
        obj["metadata"]["annotations"]["modelplane.ai/revision"] = at_priority
    return obj


def foreign(name: str, owner: str, priority: str, serving: bool = False) -> dict[str, Any]:
    """Another deployment's replica filling cluster a's two nodes, as the API server holds
    it: composed by `owner` (Crossplane's marks), in namespace ml."""
    obj = observed_in_namespace(with_priority(replica(name, "a", 0, serving=serving), priority))
    obj["spec"]["deploymentName"] = owner
    obj["metadata"]["labels"]["modelplane.ai/deployment"] = owner
    obj["metadata"]["annotations"]["crossplane.io/composition-resource-name"] = name
    obj["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelDeployment",
            "name": owner,
            "uid": f"uid-{owner}",
            "controller": True,
        }
    ]
    return obj


BATCH = foreign("batchjob-0", "batchjob", "batch")
URGENT = foreign("urgent-0", "urgent", "critical")
FULL_TRACE = [
    {
        "cluster": "a",
        "reason": "InsufficientCapacity",
        "message": "not enough free capacity for a replica",
    },
    {
        "cluster": "a",
        "pool": "h100",
        "reason": "InsufficientCapacity",
        "message": "not enough free devices: needs 2 pods of {gpu 8}; no free devices on its 2 nodes",
    },
]
NOTHING_PLACED = (
    "0 of 1 replicas scheduled: no room for more on the 1 eligible cluster; "
    "0/1 clusters available: 1 InsufficientCapacity"
)


CRITICAL = revision_of(with_priority(deployment(1), "critical"))
BATCH_REVISION = revision_of(with_priority(deployment(1), "batch"))


def nothing_placed(revision: str = CRITICAL, priority: str = "critical") -> dict[str, Any]:
    return response(
        wanted=1,
        revision=revision,
        of=with_priority(deployment(1), priority),
        asked=requirements("a"),
        status={
            "replicas": {"total": 0, "ready": 0},
            "placements": [],
            "matchTrace": FULL_TRACE,
            "endpoints": [],
        },
        composite_ready="READY_FALSE",
        conditions=[
            condition("ReplicasScheduled", False, "InsufficientCapacity", NOTHING_PLACED),
            condition("ReplicasReady", False, "ReplicasNotReady", "0 of 1 replicas serving"),
            ALL_ACCEPTED,
        ],
        results=[event("WARNING", "InsufficientCapacity", NOTHING_PLACED)],
    )


PREEMPTIVE = [cluster("a", 2)]
PREEMPTIVE[0]["spec"]["scheduling"] = {"preemption": "LowerPriority"}
SERVING_BATCH = foreign("batchjob-0", "batchjob", "batch", serving=True)
PREEMPTS = "replica batchjob-0 of ModelDeployment batchjob"

RUNNING_BATCH = observed_in_namespace(with_priority(replica(A0, "a", 0, serving=True), "batch"))
NOPE = revision_of(with_priority(deployment(1), "nope"))
NO_SUCH_CLASS = (
    "spec.priority: no PriorityClass 'nope' exists (the control plane has: batch, critical): "
    "pods naming it are refused; "
    "keeping 1 existing replica as recorded and placing nothing new"
)


def held_for_priority() -> dict[str, Any]:
    """A running replica kept exactly as it runs, the spec's priority named as the cause."""
    want = response(
        revision=NOPE,
        of=with_priority(deployment(1), "nope"),
        asked={
            "resources": {
                **narrow_requirements("a")["resources"],
                **requirements("a")["resources"],
            }
        },
        resources={A0: composed(RUNNING_BATCH, ready=True)},
        status={
            "replicas": {"total": 1, "ready": 1},
            "updatedReplicas": 0,
            "placements": [placement(A0, "a", 0, serving=True)],
            "endpoints": [],
            "matchTrace": [],
        },
        conditions=[
            condition("ReplicasScheduled", False, "PriorityNotFound", NO_SUCH_CLASS),
            condition("ReplicasReady", True, "AllReplicasReady", "1 of 1 replicas serving"),
            ALL_ACCEPTED,
        ],
        results=[event("WARNING", "PriorityNotFound", NO_SUCH_CLASS)],
    )
    want["conditions"][-1] = condition(
        "Progressing",
        False,
        "RolloutStalled",
        f"0 of 1 replicas run revision {NOPE}; the spec cannot be placed (see "
        "ReplicasScheduled), so every replica is held",
    )
    return want


CASES = [
    pytest.param(
        request(
            decided(with_priority(deployment(1), "nope")),
            # Its replica names its cluster: the loop began there, and the hold widened it.
            required={
                **narrow_fetched(ONE_CLUSTER, [RUNNING_BATCH]),
                **fetched(ONE_CLUSTER, [RUNNING_BATCH]),
                "priorityclasses": PRIORITY_CLASSES,
            },
            observed={A0: RUNNING_BATCH},
        ),
        held_for_priority(),
        id="a priority naming no PriorityClass holds what runs, naming spec.priority",
    ),
    pytest.param(
        request(
            with_priority(deployment(1), "nope"),
            required=fetched(ONE_CLUSTER, [BATCH]),
        ),
        nothing_placed(revision=NOPE, priority="nope"),
        id="with no PriorityClass known, an unknown priority is not judged (as the CLI)",
    ),
    pytest.param(
        request(
            with_priority(deployment(1), "critical"),
            required={**fetched(PREEMPTIVE, [SERVING_BATCH]), "priorityclasses": PRIORITY_CLASSES},
        ),
        response(
            revision=CRITICAL,
            asked=requirements("a"),
            of=with_priority(deployment(1), "critical"),
            resources={A0: composed(with_priority(replica(A0, "a", 0), "critical"), ready=False)},
            status={
                "replicas": {"total": 1, "ready": 0},
                "placements": [placement(A0, "a", 0)],
                "endpoints": [],
                "matchTrace": [],
                "preemptions": [{"replica": A0, "cluster": "a", "preempts": [PREEMPTS]}],
            },
            conditions=[
                condition(
                    "ReplicasScheduled",
                    True,
                    "AllReplicasScheduled",
                    "1 of 1 replicas scheduled across 1 cluster",
                ),
                condition("ReplicasReady", False, "ReplicasNotReady", "0 of 1 replicas serving"),
                ALL_ACCEPTED,
            ],
            results=[
                event(
                    "WARNING",
                    "Preempting",
                    f"Replica {A0} on cluster a preempts {PREEMPTS}, of lower priority",
                ),
                event(
                    "NORMAL",
                    "ReplicaPlaced",
                    f"Placed replica {A0} on cluster a (pool h100): no room otherwise, so it "
                    f"preempts {PREEMPTS}, serving at lower priority, on a cluster that allows "
                    "preemption",
                ),
            ],
        ),
        id="on a cluster that allows preemption a higher priority preempts a serving lower one",
    ),
    pytest.param(
        request(
            with_priority(deployment(1), "critical"),
            required={**fetched(ONE_CLUSTER, [BATCH]), "priorityclasses": PRIORITY_CLASSES},
        ),
        response(
            revision=CRITICAL,
            asked=requirements("a"),
            of=with_priority(deployment(1), "critical"),
            resources={A0: composed(with_priority(replica(A0, "a", 0), "critical"), ready=False)},
            status={
                "replicas": {"total": 1, "ready": 0},
                "placements": [placement(A0, "a", 0)],
                "endpoints": [],
                "matchTrace": [],
            },
            conditions=[
                condition(
                    "ReplicasScheduled",
                    True,
                    "AllReplicasScheduled",
                    "1 of 1 replicas scheduled across 1 cluster",
                ),
                condition("ReplicasReady", False, "ReplicasNotReady", "0 of 1 replicas serving"),
                ALL_ACCEPTED,
            ],
            results=[
                event(
                    "NORMAL",
                    "ReplicaPlaced",
                    f"Placed replica {A0} on cluster a (pool h100): no eligible "
                    "cluster had free room, so it takes capacity from replica batchjob-0 of "
                    "ModelDeployment batchjob, not serving and of lower priority, which yield",
                )
            ],
        ),
        id="a higher priority takes capacity from a lower one that is not serving",
    ),
    pytest.param(
        request(
            with_priority(deployment(1), "critical"),
            required={
                **fetched(ONE_CLUSTER, [foreign("batchjob-0", "batchjob", "batch", serving=True)]),
                "priorityclasses": PRIORITY_CLASSES,
            },
        ),
        nothing_placed(),
        id="a serving replica is never displaced",
    ),
    pytest.param(
        request(
            with_priority(deployment(1), "critical"),
            required=fetched(ONE_CLUSTER, [BATCH]),
        ),
        nothing_placed(),
        id="unfetched PriorityClasses are no priority information: nothing is displaced",
    ),
    pytest.param(
        request(
            decided(with_priority(deployment(1), "batch")),
            # Its one replica records its cluster and revision, so the fetch loop began
            # narrow (cluster a by name): the yield widened it to the fleet.
            required={
                **narrow_fetched(ONE_CLUSTER, [URGENT]),
                **fetched(TWO_CLUSTERS, [URGENT]),
                "priorityclasses": PRIORITY_CLASSES,
            },
            observed={A0: observed_in_namespace(with_priority(replica(A0, "a", 0), "batch"))},
        ),
        response(
            asked={
                "resources": {
                    **narrow_requirements("a")["resources"],
                    **requirements("a", "b")["resources"],
                }
            },
            revision=BATCH_REVISION,
            of=with_priority(deployment(1), "batch"),
            resources={B0: composed(with_priority(replica(B0, "b", 0), "batch"), ready=False)},
            status={
                "replicas": {"total": 1, "ready": 0},
                "placements": [placement(B0, "b", 0)],
                "endpoints": [],
                "matchTrace": [
                    *FULL_TRACE,
                    {
                        "cluster": "a",
                        "pool": "h100",
                        "reason": "Yielded",
                        "message": f"replica {A0} is not serving yet and yielded its place to "
                        "replica urgent-0 of ModelDeployment urgent: it has higher priority "
                        "(critical 1000 > batch 10)",
                    },
                ],
            },
            conditions=[
                condition(
                    "ReplicasScheduled",
                    True,
                    "AllReplicasScheduled",
                    "1 of 1 replicas scheduled across 1 cluster",
                ),
                condition("ReplicasReady", False, "ReplicasNotReady", "0 of 1 replicas serving"),
                ALL_ACCEPTED,
            ],
            results=[
                event(
                    "NORMAL",
                    "ReplicaRemoved",
                    f"Removed replica {A0} from cluster a: not serving yet, it yielded pool "
                    "h100 to replica urgent-0 of ModelDeployment urgent: it has higher "
                    "priority (critical 1000 > batch 10)",
                ),
                event("NORMAL", "ReplicaPlaced", f"Placed replica {B0} on cluster b (pool h100)"),
            ],
        ),
        id="a lower-priority replica that is not serving yields and is placed elsewhere",
    ),
]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_priority_decides(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


@pytest.mark.parametrize(("req", "want"), CASES)
def test_priority_decides_over_grpc(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want
