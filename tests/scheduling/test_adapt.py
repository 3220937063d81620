"""The one adapter: generated models in, the scheduler's inputs out, every bad field named."""

import copy
from typing import Any

import pytest
from modelplane_models import InferenceCluster, ModelDeployment, ModelReplica

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.vocabulary import ANNOTATION_COMPOSITION_RESOURCE_NAME
from modelplane.scheduling import (
    Claim,
    ReplicaMemo,
    Topology,
    existing_replicas,
    read_cluster,
    read_deployment,
    read_fleet,
)
from modelplane.xfn.structs import to_struct, to_values

from .builders import (
    HOPPER,
    TEMPLATE,
    Obj,
    cluster,
    deployment,
    gpu,
    h100,
    nic,
    pool,
    read_dep,
    read_one_cluster,
    replica,
    role,
)


def test_unified_deployment_with_defaults() -> None:
    dep = read_dep(
        {
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {
                "nodeSelector": {"devices": [{"name": "gpu", "selectors": [{"cel": "x"}]}]},
                "workers": {"template": TEMPLATE},
            },
        }
    )
    assert dep.replicas == 1
    assert dep.priority is None
    assert dep.cluster_selector is None
    (only,) = dep.roles
    assert only.name == "workers"
    assert only.workers == 1
    assert only.topology == Topology()
    assert only.requests[0].count == 1
    assert only.requests[0].selectors == ("x",)


def test_disaggregated_deployment() -> None:
    dep = read_dep(
        deployment(
            2,
            decode=role(HOPPER, workers=3, topology={"pipeline": 2, "data": 4, "dataLocal": 2}),
            prefill=role(HOPPER, workers=5),
            priority="high",
        )
    )
    assert [r.name for r in dep.roles] == ["decode", "prefill"]
    assert dep.roles[0].pods == 2 * 4 // 2 * 3
    assert dep.roles[1].pods == 5
    assert dep.priority == "high"


def test_numbers_from_protobuf_structs_become_the_ints_the_schema_declares() -> None:
    # A Struct carries every number as a double; the model reads what the schema says.
    wire = to_values(to_struct(deployment(2)))
    assert wire["spec"]["replicas"] == 2.0
    dep = read_deployment(parse_object(ModelDeployment, wire))
    assert dep.replicas == 2
    assert isinstance(dep.roles[0].requests[0].count, int)
    device = read_fleet(
        [parse_object(InferenceCluster, to_values(to_struct(cluster("a", h100()))))]
    ).clusters[0]
    assert device.pools[0].nodes == 2
    assert isinstance(device.pools[0].hardware.devices[0].count, int)


def _without(obj: Obj, *path: str | int) -> Obj:
    obj = copy.deepcopy(obj)
    target: Any = obj
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return obj


def _with(obj: Obj, value: object, *path: str | int) -> Obj:
    obj = copy.deepcopy(obj)
    target: Any = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return obj


BASE = deployment(1)
DISAGG = deployment(1, decode=role(HOPPER), prefill=role(HOPPER))
DEVICES = ("spec", "nodeSelector", "devices")

DEPLOYMENT_ERRORS = [
    # What the model refuses, named by the model...
    (_with(BASE, -1, "spec", "replicas"), "spec.replicas: Input should be greater than or equal"),
    (_with(BASE, "two", "spec", "replicas"), "spec.replicas: Input should be a valid integer"),
    (_with(BASE, 1.5, "spec", "replicas"), "spec.replicas: Input should be a valid integer"),
    (_with(BASE, [], *DEVICES), "spec.nodeSelector.devices: List should have at least 1 item"),
    (_with(BASE, "gpu", *DEVICES), "spec.nodeSelector.devices: Input should be a valid list"),
    (_with(BASE, "x" * 300, "spec", "priority"), "spec.priority: String should have at most"),
    (_with(BASE, "x", "metadata"), "metadata: Input should be a valid dictionary"),
    # ...and what the schema's CEL rules refuse, named by the adapter.
    (_without(BASE, "metadata", "name"), "metadata.name: is required"),
    (_without(BASE, "metadata", "namespace"), "metadata.namespace: is required"),
    (_with(BASE, "x" * 70, "metadata", "name"), "metadata.name: 'xxxxxxx"),
    (_without(BASE, "spec", "nodeSelector"), "spec.nodeSelector: is required"),
    (_without(BASE, "spec", "workers"), "spec.workers: is required"),
    (
        _with(BASE, [HOPPER, HOPPER], *DEVICES),
        "spec.nodeSelector.devices[1].name: duplicate device request 'gpu'",
    ),
    (
        _with(BASE, {"data": 3, "dataLocal": 2}, "spec", "workers", "topology"),
        "spec.workers.topology.dataLocal: must divide data (3), not 2",
    ),
    (_without(DISAGG, "spec", "prefill"), "spec.prefill: is required when the other role is set"),
    (
        _with(DISAGG, BASE["spec"]["nodeSelector"], "spec", "nodeSelector"),
        "spec.nodeSelector: must not be set with decode and prefill",
    ),
    (_without(BASE, "spec"), "spec: is required"),
]


@pytest.mark.parametrize(
    ("obj", "message"), DEPLOYMENT_ERRORS, ids=[m for _, m in DEPLOYMENT_ERRORS]
)
def test_deployment_errors_name_the_field(obj: Obj, message: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        read_dep(obj)
    assert any(str(issue).startswith(message) for issue in error.value.issues), error.value


def test_every_problem_of_a_deployment_is_reported() -> None:
    obj = _with(BASE, [HOPPER, HOPPER], *DEVICES)
    obj["spec"]["workers"]["topology"] = {"data": 3, "dataLocal": 2}
    del obj["metadata"]["namespace"]
    with pytest.raises(InvalidInputError) as error:
        read_dep(obj)
    assert [issue.path for issue in error.value.issues] == [
        "metadata.namespace",
        "spec.nodeSelector.devices[1].name",
        "spec.workers.topology.dataLocal",
    ]


def test_cluster() -> None:
    obj = cluster("a", h100(), labels={"tier": "prod"}, default_priority="p", allowed=["p", "q"])
    parsed = read_one_cluster(obj)
    assert parsed.name == "a"
    assert parsed.labels == {"tier": "prod"}
    assert parsed.default_priority == "p"
    assert parsed.allowed_priorities == ("p", "q")
    assert parsed.declared_pools == frozenset({"h100"})
    (h,) = parsed.pools
    assert (h.name, h.class_name, h.nodes) == ("h100", "h100-class", 2)
    (device,) = h.hardware.devices
    assert device.claim is Claim.DRA
    assert device.attributes == (("arch", "string", "Hopper"),)
    assert device.capacity == (("memory", "80"),)
    assert parsed.pool("h100") is h
    assert parsed.pool("nope") is None


def test_cluster_without_spec_or_status_has_no_pools() -> None:
    parsed = read_one_cluster({"metadata": {"name": "fresh"}})
    assert parsed.pools == ()
    assert parsed.declared_pools == frozenset()
    assert parsed.allowed_priorities == ()  # no allow-list: parse_scheduling reads it as empty


def test_device_fields_are_typed_and_sorted() -> None:
    device = {
        "name": "gpu",
        "driver": "gpu.nvidia.com",
        "deviceClassName": "gpu.nvidia.com",
        "allowMultipleAllocations": True,
        "attributes": {"ok": {"bool": True}, "cores": {"int": 132}, "cc": {"version": "9.0.0"}},
        "capacity": {"memory": {"value": "80Gi"}, "bw": {"value": "3Ti"}},
    }
    parsed = read_one_cluster(cluster("a", pool("p", 1, device))).pools[0].hardware.devices[0]
    assert parsed.claim is Claim.DRA
    assert parsed.count == 1
    assert parsed.allow_multiple_allocations
    assert parsed.attributes == (
        ("cc", "version", "9.0.0"),
        ("cores", "int", 132),
        ("ok", "bool", True),
    )
    assert parsed.capacity == (("bw", "3Ti"), ("memory", "80Gi"))


GPU_PATH = ("status", "gpuPools", 0, "devices", 0)
CLUSTER = cluster("a", pool("p", 1, gpu(8), nic(8)))

CLUSTER_ERRORS = [
    (_with(CLUSTER, "Maybe", *GPU_PATH, "claim"), "status.gpuPools[0].devices[0].claim: Input"),
    (
        _without(CLUSTER, *GPU_PATH, "deviceClassName"),
        "status.gpuPools[0].devices[0].deviceClassName: is required when claim is DRA",
    ),
    (
        _without(CLUSTER, *GPU_PATH, "driver"),
        "status.gpuPools[0].devices[0].driver: Field required",
    ),
    (
        _with(CLUSTER, {"string": "x", "int": 1}, *GPU_PATH, "attributes", "arch"),
        "status.gpuPools[0].devices[0].attributes.arch: must have exactly one of",
    ),
    (
        _with(CLUSTER, -1, "status", "gpuPools", 0, "nodes"),
        "status.gpuPools[0].nodes: must be at least 0, not -1",
    ),
    (_without(CLUSTER, "status", "gpuPools", 0, "name"), "status.gpuPools[0].name: is required"),
    (
        _with(CLUSTER, "p" * 64, "status", "gpuPools", 0, "name"),
        "status.gpuPools[0].name: 'pppp",
    ),
    (_with(CLUSTER, "x", "spec", "scheduling"), "spec.scheduling: Input should be a valid dict"),
    (_without(CLUSTER, "metadata", "name"), "metadata.name: is required"),
]


@pytest.mark.parametrize(("obj", "message"), CLUSTER_ERRORS, ids=[m for _, m in CLUSTER_ERRORS])
def test_cluster_errors_name_the_field(obj: Obj, message: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        read_cluster(parse_object(InferenceCluster, obj))
    assert any(str(issue).startswith(message) for issue in error.value.issues), error.value


def test_fleet_shares_equal_hardware() -> None:
    fleet = read_fleet(
        parse_object(InferenceCluster, c)
        for c in [
            cluster("a", h100()),
            cluster("b", h100()),
            cluster("c", h100(nodes=1)),
            cluster("d", h100(nodes=3)),
        ]
    )
    a, b, c, d = fleet.clusters
    assert a.pools is b.pools
    assert c.pools[0].hardware is d.pools[0].hardware is a.pools[0].hardware
    assert c.pools[0].hardware.devices[0] is a.pools[0].hardware.devices[0]


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


@pytest.mark.parametrize(
    ("source", "declared", "cloud", "runs"),
    [
        ("EKS", "1.34", "1.36", "1.36"),
        ("EKS", "1.36", "1.34", "1.34"),
        ("EKS", "1.35", None, "1.35"),
        ("Existing", "1.36", None, "1.36"),
    ],
)
def test_a_cluster_s_selectors_are_judged_at_the_version_it_runs(
    source: str, declared: str, cloud: str | None, runs: str
) -> None:
    """A created cluster whose sub-block names a version runs it, whatever
    spec.kubernetesVersion says (modelplane.provisioning.kubernetes_version)."""
    obj = _with(CLUSTER, declared, "spec", "kubernetesVersion")
    if source == "EKS":
        eks: Obj = {"region": "us-east-1", "providerConfigRef": {"name": "aws"}}
        if cloud is not None:
            eks["version"] = cloud
        obj = _with(obj, {"source": "EKS", "eks": eks}, "spec", "cluster")
    assert read_cluster(parse_object(InferenceCluster, obj)).kubernetes_version == runs
