"""compose-model-deployment: whose replica is whose, and what cannot be read.

A replica is a deployment's by Crossplane's record (its composed resources, their
controller references), never by its labels; a cluster or replica that cannot be
read keeps what runs.
"""

from compose_model_deployment.fn import FunctionRunner

from modelplane_dev.fuzz import final_response
from modelplane_dev.testing import as_dict, request, run

from .asked import fetched, widened, widened_requirements
from .objects import A0, B0, FLEET, as_running, cluster, decided, deployment, replica


def test_a_replica_labelled_as_this_deployments_is_not_adopted() -> None:
    """Labels do not make a replica this deployment's: another deployment's replica
    relabelled `kimi` is charged to capacity, never composed or counted here."""
    other = as_running(replica("other-0", "b", 0), uid="uid-of-other")
    other["metadata"]["ownerReferences"][0]["name"] = "other"
    other["spec"]["deploymentName"] = "other"
    req = request(deployment(3), required=fetched(FLEET, [other]))
    got = as_dict(run(FunctionRunner(), req))
    assert "other-0" not in got["desired"]["resources"]
    placements_ = got["desired"]["composite"]["resource"]["status"]["placements"]
    # Cluster b's two nodes are taken by the other replica: two land on a, none on b.
    assert [(p["cluster"], p["index"]) for p in placements_] == [("a", 0), ("a", 1)]


def test_a_namesakes_leftover_replica_is_not_retained() -> None:
    """A replica an earlier deployment of the same name composed (another uid) is not
    this one's: it is charged while it lingers, and this deployment places its own."""
    leftover = as_running(replica("kimi-old", "b", 0), uid="uid-of-the-deleted-kimi")
    req = request(deployment(1), required=fetched(FLEET, [leftover]))
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == [A0]


def test_an_unreadable_cluster_keeps_its_replica_and_says_so() -> None:
    """A garbage InferenceCluster is not a deleted one: the replica on it is held."""
    garbage_b = cluster("b", 2)
    garbage_b["status"]["gpuPools"][0]["nodes"] = "two"
    running = {
        A0: as_running(replica(A0, "a", 0, serving=True)),
        B0: as_running(replica(B0, "b", 0, serving=True)),
    }
    req = request(
        decided(deployment(2)),
        required=fetched([cluster("a", 4), garbage_b], list(running.values())),
        observed=running,
    )
    # The answer Crossplane keeps: settled, its own clusters are asked for by name too.
    got = as_dict(final_response(FunctionRunner(), req))
    assert {"inferenceclusters/a", "inferenceclusters/b"} <= set(got["requirements"]["resources"])
    assert sorted(got["desired"]["resources"]) == [A0, B0]
    assert got["desired"]["resources"][B0]["resource"]["spec"] == running[B0]["spec"]
    assert got["conditions"][0]["reason"] == "AllReplicasScheduled"
    trace = got["desired"]["composite"]["resource"]["status"]["matchTrace"]
    assert trace == [
        {
            "cluster": "b",
            "reason": "ClusterUnreadable",
            "message": "cannot be read (status.gpuPools[0].nodes: Input should be a valid "
            "integer): its replicas are kept as recorded, nothing new is placed",
        }
    ]
    warnings = [r for r in got["results"] if r["severity"] == "SEVERITY_WARNING"]
    assert [w["reason"] for w in warnings] == ["ClusterUnreadable"]
    assert warnings[0]["message"].startswith("InferenceCluster b cannot be read")


def test_an_unreadable_own_replica_keeps_everything() -> None:
    """A composed replica that cannot be read stops the decision, not the replicas."""
    broken = as_running(replica(B0, "b", 0, serving=True))
    broken["spec"]["index"] = "zero"
    running = {A0: as_running(replica(A0, "a", 0, serving=True)), B0: broken}
    # Both replicas name their cluster, so the loop began narrow; the decision cannot
    # keep an unreadable replica, so it widened.
    req = request(
        decided(deployment(1)),
        required=widened(FLEET, list(running.values())),
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == [A0, B0]
    (scheduled,) = got["conditions"]
    assert scheduled["type"] == "ReplicasScheduled"
    assert scheduled["status"] == "STATUS_CONDITION_FALSE"
    assert scheduled["message"].startswith(f"modelreplicas[{B0}].spec.index: ")
    # Asked for on every call, so Crossplane's fetch loop settles.
    assert got["requirements"] == widened_requirements(["a", "b"], ["a", "b"])
