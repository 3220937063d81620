"""The one adapter: generated models in, the scheduler's inputs out, every bad field named."""

import copy
from typing import Any

import pytest
from modelplane_models import InferenceCluster, ModelDeployment

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.scheduling import (
    Claim,
    Topology,
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


@pytest.mark.parametrize(
    ("source", "declared", "cloud", "published", "runs"),
    [
        ("EKS", "1.34", "1.36", None, "1.36"),
        ("EKS", "1.36", "1.34", None, "1.34"),
        ("EKS", "1.35", None, None, "1.35"),
        ("Existing", "1.36", None, None, "1.36"),
        # A change the cloud refused: the cluster runs what its function composed.
        ("EKS", "1.34", "1.36", "1.34", "1.34"),
        ("EKS", "1.36", None, "1.34", "1.34"),
        # Only a created cluster is composed with a version.
        ("Existing", "1.36", None, "1.34", "1.36"),
    ],
)
def test_a_cluster_s_selectors_are_judged_at_the_version_it_runs(
    source: str, declared: str, cloud: str | None, published: str | None, runs: str
) -> None:
    """A created cluster runs the version its function published it composed, else
    (before the first status) its sub-block's version, whatever spec.kubernetesVersion
    says (modelplane.provisioning.kubernetes_version)."""
    obj = _with(CLUSTER, declared, "spec", "kubernetesVersion")
    if published is not None:
        obj = _with(obj, published, "status", "kubernetesVersion")
    if source == "EKS":
        eks: Obj = {"region": "us-east-1", "providerConfigRef": {"name": "aws"}}
        if cloud is not None:
            eks["version"] = cloud
        obj = _with(obj, {"source": "EKS", "eks": eks}, "spec", "cluster")
    assert read_cluster(parse_object(InferenceCluster, obj)).kubernetes_version == runs
