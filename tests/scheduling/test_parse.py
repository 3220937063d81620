"""Parsing API objects into scheduler inputs, with field paths in every error."""

import copy
from typing import Any

import pytest

from modelplane.core import vocabulary
from modelplane.scheduling import (
    Claim,
    InputError,
    Topology,
    parse_cluster,
    parse_clusters,
    parse_deployment,
    parse_replica,
    parse_replicas,
)

from .builders import HOPPER, Obj, cluster, deployment, gpu, h100, nic, pool, replica, role


def test_unified_deployment_with_defaults() -> None:
    dep = parse_deployment(
        {
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"nodeSelector": {"devices": [{"name": "gpu", "selectors": [{"cel": "x"}]}]}},
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
    dep = parse_deployment(
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


def test_numbers_from_protobuf_structs_are_integers() -> None:
    obj = deployment(2)
    obj["spec"]["replicas"] = 2.0
    obj["spec"]["nodeSelector"]["devices"][0]["count"] = 8.0
    dep = parse_deployment(obj)
    assert dep.replicas == 2
    assert isinstance(dep.roles[0].requests[0].count, int)


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
DEVICE = ("spec", "nodeSelector", "devices", 0)

DEPLOYMENT_ERRORS = [
    (_without(BASE, "metadata", "name"), "metadata.name: is required"),
    (_without(BASE, "metadata", "namespace"), "metadata.namespace: is required"),
    (_with(BASE, -1, "spec", "replicas"), "spec.replicas: must be at least 0, not -1"),
    (_with(BASE, "two", "spec", "replicas"), "spec.replicas: must be an integer, not 'two'"),
    (_with(BASE, True, "spec", "replicas"), "spec.replicas: must be an integer, not a boolean"),
    (_with(BASE, 1.5, "spec", "replicas"), "spec.replicas: must be an integer, not 1.5"),
    (_without(BASE, "spec", "nodeSelector"), "spec.nodeSelector: is required"),
    (_with(BASE, [], "spec", "nodeSelector", "devices"), "spec.nodeSelector.devices: must name"),
    (
        _with(BASE, "gpu", "spec", "nodeSelector", "devices"),
        "spec.nodeSelector.devices: must be a list",
    ),
    (_with(BASE, 0, *DEVICE, "count"), "spec.nodeSelector.devices[0].count: must be at least 1"),
    (
        _with(BASE, [{}], *DEVICE, "selectors"),
        "spec.nodeSelector.devices[0].selectors[0].cel: is required",
    ),
    (
        _with(BASE, [HOPPER, HOPPER], "spec", "nodeSelector", "devices"),
        "spec.nodeSelector.devices[1].name: duplicate device request 'gpu'",
    ),
    (
        _with(BASE, {"data": 3, "dataLocal": 2}, "spec", "workers", "topology"),
        "spec.workers.topology.dataLocal: must divide data (3), not 2",
    ),
    (
        _with(BASE, {"pipeline": 0}, "spec", "workers", "topology"),
        "spec.workers.topology.pipeline: must be at least 1",
    ),
    (_with(BASE, 0, "spec", "workers", "count"), "spec.workers.count: must be at least 1"),
    (_without(DISAGG, "spec", "prefill"), "spec.prefill: is required when the other role is set"),
    (
        _with(DISAGG, BASE["spec"]["nodeSelector"], "spec", "nodeSelector"),
        "spec.nodeSelector: must not be set",
    ),
    (_without(DISAGG, "spec", "decode", "nodeSelector"), "spec.decode.nodeSelector: is required"),
    (
        _with(BASE, {"matchLabels": "x"}, "spec", "clusterSelector"),
        "spec.clusterSelector.matchLabels: must be an object",
    ),
    (
        _with(
            BASE,
            {"matchExpressions": [{"key": "k", "operator": "In", "values": "v"}]},
            "spec",
            "clusterSelector",
        ),
        "spec.clusterSelector.matchExpressions[0].values: must be a list",
    ),
]


@pytest.mark.parametrize(
    ("obj", "message"), DEPLOYMENT_ERRORS, ids=[m for _, m in DEPLOYMENT_ERRORS]
)
def test_deployment_errors_name_the_field(obj: Obj, message: str) -> None:
    with pytest.raises(InputError) as error:
        parse_deployment(obj)
    assert str(error.value).startswith(message), str(error.value)
    assert isinstance(error.value, ValueError)


def test_cluster() -> None:
    obj = cluster("a", h100(), labels={"tier": "prod"}, default_priority="p", allowed=["p", "q"])
    parsed = parse_cluster(obj)
    assert parsed.name == "a"
    assert parsed.labels == {"tier": "prod"}
    assert parsed.default_priority == "p"
    assert parsed.allowed_priorities == ("p", "q")
    (h,) = parsed.pools
    assert (h.name, h.class_name, h.nodes) == ("h100", "h100-class", 2)
    (device,) = h.hardware.devices
    assert device.claim is Claim.DRA
    assert device.attributes == (("arch", "string", "Hopper"),)
    assert device.capacity == (("memory", "80"),)
    assert parsed.pool("h100") is h
    assert parsed.pool("nope") is None


def test_cluster_without_status_has_no_pools() -> None:
    parsed = parse_cluster({"metadata": {"name": "fresh"}})
    assert parsed.pools == ()
    assert parsed.allowed_priorities is None


def test_device_spellings() -> None:
    device = {
        "name": "gpu",
        "driver": "gpu.nvidia.com",
        "deviceClassName": "gpu.nvidia.com",
        "attributes": {"cores": {"int": 132.0}, "ok": {"bool": True}, "cc": {"version": "9.0.0"}},
        "capacity": {"memory": "80Gi", "bw": {"value": "3Ti"}},
    }
    parsed = parse_cluster(cluster("a", pool("p", 1, device))).pools[0].hardware.devices[0]
    assert parsed.claim is Claim.DRA
    assert parsed.count == 1
    assert parsed.attributes == (
        ("cc", "version", "9.0.0"),
        ("cores", "int", 132),
        ("ok", "bool", True),
    )
    assert parsed.capacity == (("bw", "3Ti"), ("memory", "80Gi"))
    assert parsed.as_spec()["capacity"] == {"bw": {"value": "3Ti"}, "memory": {"value": "80Gi"}}
    assert parsed.as_spec()["attributes"] == {
        "cc": {"version": "9.0.0"},
        "cores": {"int": 132},
        "ok": {"bool": True},
    }


GPU_PATH = ("status", "gpuPools", 0, "devices", 0)
CLUSTER = cluster("a", pool("p", 1, gpu(8), nic(8)))

CLUSTER_ERRORS = [
    (_without(CLUSTER, "metadata", "name"), "metadata.name: is required"),
    (
        _with(CLUSTER, "Maybe", *GPU_PATH, "claim"),
        "status.gpuPools[0].devices[0].claim: must be DRA or Synthetic",
    ),
    (
        _without(CLUSTER, *GPU_PATH, "deviceClassName"),
        "status.gpuPools[0].devices[0].deviceClassName: is required when claim is DRA",
    ),
    (_without(CLUSTER, *GPU_PATH, "driver"), "status.gpuPools[0].devices[0].driver: is required"),
    (
        _with(CLUSTER, {"string": "x", "int": 1}, *GPU_PATH, "attributes", "arch"),
        "status.gpuPools[0].devices[0].attributes.arch: must have exactly one of",
    ),
    (
        _with(CLUSTER, -1, "status", "gpuPools", 0, "nodes"),
        "status.gpuPools[0].nodes: must be at least 0",
    ),
    (_with(CLUSTER, "x", "spec", "scheduling"), "spec.scheduling: must be an object"),
]


@pytest.mark.parametrize(("obj", "message"), CLUSTER_ERRORS, ids=[m for _, m in CLUSTER_ERRORS])
def test_cluster_errors_name_the_field(obj: Obj, message: str) -> None:
    with pytest.raises(InputError) as error:
        parse_cluster(obj)
    assert str(error.value).startswith(message), str(error.value)


def test_fleet_errors_name_the_cluster() -> None:
    with pytest.raises(InputError) as error:
        parse_clusters([CLUSTER, _without(CLUSTER, *GPU_PATH, "driver")])
    assert error.value.path == "inferenceclusters[a].status.gpuPools[0].devices[0].driver"


def test_fleet_shares_equal_hardware() -> None:
    a, b = parse_clusters([cluster("a", h100()), cluster("b", h100())])
    assert a.pools is b.pools
    c, d = parse_clusters([cluster("c", h100(nodes=1)), cluster("d", h100(nodes=2))])
    assert c.pools[0].hardware is d.pools[0].hardware


def test_replica_identity_from_labels_then_spec() -> None:
    parsed = parse_replica(replica("a", 3))
    assert (parsed.deployment, parsed.cluster, parsed.index) == ("model", "a", 3)
    assert parsed.namespace == "ml"
    (recorded,) = parsed.roles
    assert recorded.pool == "h100"
    assert recorded.requests[0].device_class_name == "gpu.nvidia.com"

    unlabelled = replica("b", 2)
    unlabelled["metadata"]["labels"] = {}
    parsed = parse_replica(unlabelled)
    assert (parsed.deployment, parsed.cluster, parsed.index) == ("model", "b", 2)

    malformed = replica("b", 2)
    malformed["metadata"]["labels"][vocabulary.LABEL_REPLICA_INDEX] = "two"
    del malformed["spec"]["index"]
    assert parse_replica(malformed).index is None


INDEXES = [
    # (id, index label, spec.index, parsed index)
    ("label", "7", None, 7),
    ("label with leading zeros", "007", None, 7),
    ("a digit only to str.isdigit", "\u00b2", None, None),
    ("negative label", "-1", None, None),
    ("integral float from a Struct", None, 4.0, 4),
    ("fractional float", None, 4.5, None),
    ("negative spec index", None, -2, None),
    ("boolean", None, True, None),
    ("too large for a float", None, 10**400, 10**400),
    ("infinity", None, float("inf"), None),
    ("a malformed label falls back to the spec", "x", 3, 3),
]


@pytest.mark.parametrize(
    ("label", "spec_index", "index"), [c[1:] for c in INDEXES], ids=[c[0] for c in INDEXES]
)
def test_replica_index_is_read_or_left_unknown(
    label: str | None, spec_index: object, index: int | None
) -> None:
    obj = replica("a", 0)
    labels = obj["metadata"]["labels"]
    del labels[vocabulary.LABEL_REPLICA_INDEX]
    if label is not None:
        labels[vocabulary.LABEL_REPLICA_INDEX] = label
    obj["spec"]["index"] = spec_index
    assert parse_replica(obj).index == index


def test_cluster_fields_the_scheduler_does_not_read_are_not_checked() -> None:
    obj = cluster("a", h100())
    obj["spec"]["backend"] = "not an object"
    assert parse_cluster(obj).name == "a"


def test_replica_errors_name_the_replica() -> None:
    broken = replica("a", 0)
    broken["spec"]["workers"]["deviceRequests"][0]["deviceClassName"] = ""
    with pytest.raises(InputError) as error:
        parse_replicas([replica("a", 1), broken])
    assert error.value.path == "replicas[1].spec.workers.deviceRequests[0].deviceClassName"
