"""The adapter's reading of ModelReplicas: whose a replica is (Crossplane's marks), what an
unreadable one does to a decision, and the memo that reads each replica once."""

import pytest
from modelplane_models import ModelDeployment, ModelReplica

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.vocabulary import ANNOTATION_COMPOSITION_RESOURCE_NAME
from modelplane.scheduling import (
    ReplicaMemo,
    existing_replicas,
    read_deployment,
)

from .builders import (
    Obj,
    deployment,
    read_dep,
    replica,
)

DEP = read_dep(deployment(1))


def _models(*objs: Obj) -> list[ModelReplica]:
    return [parse_object(ModelReplica, obj) for obj in objs]


def test_replica_identity_is_its_spec_and_its_owner_crossplanes_record() -> None:
    obj = replica("a", 3)
    obj["metadata"]["labels"] = {
        "modelplane.ai/deployment": "other",
        "modelplane.ai/cluster": "b",
        "modelplane.ai/replica-index": "7",
    }
    (parsed,) = existing_replicas(DEP, None, {}, _models(obj)).replicas
    assert (parsed.owner, parsed.cluster, parsed.index) == ("model", "a", 3)
    assert parsed.namespace == "ml"
    (recorded,) = parsed.roles
    assert recorded.pool == "h100"
    assert recorded.device_requests[0].device_class_name == "gpu.nvidia.com"


def test_without_crossplanes_marks_a_replica_is_nobodys() -> None:
    unmarked = replica("a", 0)
    del unmarked["metadata"]["annotations"][ANNOTATION_COMPOSITION_RESOURCE_NAME]
    not_controller = replica("a", 1)
    not_controller["metadata"]["ownerReferences"][0]["controller"] = False
    known = existing_replicas(DEP, None, {}, _models(unmarked, not_controller))
    owners = [r.owner for r in known.replicas]
    assert owners == [None, None]


def test_a_namesakes_leftover_is_not_this_deployments() -> None:
    leftover = replica("a", 0)
    leftover["metadata"]["ownerReferences"][0]["uid"] = "uid-of-the-deleted-one"
    ours = replica("a", 1)
    ours["metadata"]["ownerReferences"][0]["uid"] = "uid-now"
    known = existing_replicas(DEP, "uid-now", {}, _models(leftover, ours))
    assert [(r.name, r.owner) for r in known.replicas] == [
        ("model-a-0", None),
        ("model-a-1", "model"),
    ]


def test_composed_replicas_are_this_deployments_by_their_composition_resource_name() -> None:
    # Whatever its labels and marks say, Crossplane observed it as this deployment's.
    stray = replica("a", 0, deployment_name="other")
    stray["metadata"]["name"] = "renamed"
    stray["metadata"]["namespace"] = "elsewhere"
    known = existing_replicas(DEP, None, {"model-a-0": parse_object(ModelReplica, stray)}, [])
    (parsed,) = known.replicas
    assert (parsed.namespace, parsed.name, parsed.owner) == ("ml", "model-a-0", "model")


def test_an_unreadable_composed_replica_stops_the_decision_and_is_named() -> None:
    broken = replica("a", 0)
    broken["spec"]["workers"]["topology"] = {"data": 3, "dataLocal": 2}
    with pytest.raises(InvalidInputError) as error:
        existing_replicas(DEP, None, {"model-a-0": parse_object(ModelReplica, broken)}, [])
    (issue,) = error.value.issues
    assert issue.path == "modelreplicas[model-a-0].spec.workers.topology.dataLocal"


def test_another_deployments_unreadable_replica_is_skipped_and_counted() -> None:
    broken = replica("a", 0, deployment_name="other")
    broken["spec"]["workers"]["topology"] = {"data": 3, "dataLocal": 2}
    known = existing_replicas(DEP, None, {}, _models(broken, replica("b", 0)))
    assert [r.name for r in known.replicas] == ["model-b-0"]
    assert known.skipped == 1


def test_a_replica_read_from_the_same_model_and_words_is_the_same_replica() -> None:
    replica_memo = ReplicaMemo(entries=2)
    a, b = _models(replica("a", 0), replica("b", 1))
    plain = existing_replicas(DEP, None, {}, [a, b], {("ml", "model-a-0")})
    first = existing_replicas(DEP, None, {}, [a, b], {("ml", "model-a-0")}, replica_memo)
    again = existing_replicas(DEP, None, {}, [a, b], {("ml", "model-a-0")}, replica_memo)
    assert first == plain
    assert all(x is y for x, y in zip(first.replicas, again.replicas, strict=True))
    # What the caller says of a replica is part of its identity: serving or not.
    stopped = existing_replicas(DEP, None, {}, [a, b], frozenset(), replica_memo)
    assert [r.serving for r in stopped.replicas] == [False, False]
    assert stopped == existing_replicas(DEP, None, {}, [a, b])
    # Past its bound the memo starts over rather than grow.
    assert len(replica_memo._replicas) <= 2  # pyright: ignore[reportPrivateUsage]


def test_a_memo_reads_every_kind_of_fleet_replica_as_a_fresh_read_does() -> None:
    """Nobody's, another deployment's, a namesake's leftover, this deployment's, an
    unreadable one; serving or not; for this deployment and for another reading the
    same models: the memo's answer is the plain one, call after call."""
    unmarked = replica("a", 0)
    del unmarked["metadata"]["annotations"][ANNOTATION_COMPOSITION_RESOURCE_NAME]
    leftover = replica("a", 1)
    leftover["metadata"]["ownerReferences"][0]["uid"] = "uid-of-the-deleted-one"
    ours = replica("a", 2)
    ours["metadata"]["ownerReferences"][0]["uid"] = "uid-now"
    broken = replica("b", 0, deployment_name="other")
    broken["spec"]["workers"]["topology"] = {"data": 3, "dataLocal": 2}
    models = _models(unmarked, leftover, ours, broken, replica("b", 1, deployment_name="other"))
    other = read_dep(deployment(1, name="other"))
    memo = ReplicaMemo()
    for serving in (frozenset(), {("ml", "model-a-2"), ("ml", "other-b-1")}):
        for dep, uid in ((DEP, "uid-now"), (DEP, None), (other, None), (DEP, "uid-now")):
            plain = existing_replicas(dep, uid, {}, models, serving)
            assert existing_replicas(dep, uid, {}, models, serving, memo) == plain
            assert plain.skipped == 1


def test_a_model_read_again_reads_afresh_to_an_equal_deployment() -> None:
    # Nothing is kept process-wide: the runner that reads a model twice keeps it.
    model = parse_object(ModelDeployment, deployment(2, priority="high"))
    first = read_deployment(model)
    again = read_deployment(model)
    assert again == first
    assert again is not first
    other = read_deployment(parse_object(ModelDeployment, deployment(3, priority="high")))
    assert other.replicas == 3


def test_a_model_that_cannot_be_read_is_refused_every_time() -> None:
    model = parse_object(ModelDeployment, deployment(1, name="Not_A_Name"))
    for _ in range(2):
        with pytest.raises(InvalidInputError) as error:
            read_deployment(model)
        assert [issue.path for issue in error.value.issues] == ["metadata.name"]
