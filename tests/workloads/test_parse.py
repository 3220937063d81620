"""Reading observed objects into the renderer's inputs (through the generated models),
and naming the field at fault."""

import copy
from typing import Any

import pytest
from modelplane_models.inference_cluster import BackendType

from modelplane.core.devices import ClaimRequest
from modelplane.core.issues import InvalidInputError
from modelplane.core.topology import Topology
from modelplane.core.vocabulary import Reason

from .inputs import read_cluster, read_replica


def test_unified_replica_parses(build: Any) -> None:
    obj = build.replica(
        workers=build.role(
            count=2, topology={"tensor": 8, "pipeline": 2, "data": 4, "dataLocal": 2}
        )
    )
    replica = read_replica(obj)
    assert (replica.namespace, replica.name) == ("ml-team-prod", "kimi-k2-5ab63")
    assert (replica.deployment_name, replica.cluster_name) == ("kimi-k2", "prod-us-east")
    assert replica.priority == "production-critical"
    assert not replica.disaggregated
    assert [r.placed.role for r in replica.roles] == ["workers"]
    workers = replica.roles[0]
    assert workers.placed.workers == 2
    assert workers.placed.topology == Topology(tensor=8, pipeline=2, data=4, data_local=2)
    assert workers.placed.topology.nodes_per_worker == 4
    assert workers.placed.pool == "h100"
    assert workers.placed.device_requests == (
        ClaimRequest("gpu", "gpu.nvidia.com", 8, ('device.driver == "gpu.nvidia.com"',)),
    )
    assert workers.path == "spec.workers"


def test_disaggregated_replica_parses_in_role_order(build: Any) -> None:
    replica = read_replica(
        build.replica(decode=build.role(count=3), prefill=build.role(count=5, pool="l4"))
    )
    assert replica.disaggregated
    assert [(r.placed.role, r.placed.workers, r.placed.pool) for r in replica.roles] == [
        ("decode", 3, "h100"),
        ("prefill", 5, "l4"),
    ]


def test_defaults(build: Any) -> None:
    obj = build.replica()
    workers = obj["spec"]["workers"]
    del workers["count"], workers["topology"]
    del obj["spec"]["priority"]
    replica = read_replica(obj)
    role = replica.roles[0]
    assert (role.placed.workers, role.placed.topology) == (1, Topology())
    assert replica.priority is None


def test_parse_copies_the_template(build: Any) -> None:
    obj = build.replica()
    replica = read_replica(obj)
    obj["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] = "changed"
    assert replica.roles[0].template["spec"]["containers"][0]["image"] != "changed"


def _set(obj: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = obj
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("metadata.name", _DELETE, "metadata.name"),
        ("metadata.namespace", "", "metadata.namespace"),
        ("spec.deploymentName", 7, "spec.deploymentName"),
        ("spec.clusterName", _DELETE, "spec.clusterName"),
        ("spec.workers.count", 0, "spec.workers.count"),
        ("spec.workers.count", "two", "spec.workers.count"),
        ("spec.workers.topology.tensor", 0, "spec.workers.topology.tensor"),
        ("spec.workers.topology", {"data": 4, "dataLocal": 3}, "spec.workers.topology.dataLocal"),
        ("spec.workers.topology", [], "spec.workers.topology"),
        ("spec.workers.template", _DELETE, "spec.workers.template"),
        ("spec.workers.nodePoolName", _DELETE, "spec.workers.nodePoolName"),
        ("spec.workers.deviceRequests", {}, "spec.workers.deviceRequests"),
        ("spec.workers.deviceRequests.0.name", "GPU_0", "spec.workers.deviceRequests[0].name"),
        (
            "spec.workers.deviceRequests.0.deviceClassName",
            "Not A Class",
            "spec.workers.deviceRequests[0].deviceClassName",
        ),
        ("spec.workers.deviceRequests.0.count", 0, "spec.workers.deviceRequests[0].count"),
        (
            "spec.workers.deviceRequests.0.selectors",
            [{"expression": "true"}],
            "spec.workers.deviceRequests[0].selectors[0].cel",
        ),
        ("spec.workers", _DELETE, "spec.workers"),
        ("spec", "nope", "spec"),
    ],
)
def test_replica_errors_name_the_field(build: Any, path: str, value: Any, field: str) -> None:
    obj = build.replica()
    _set(obj, path, value)
    with pytest.raises(InvalidInputError) as caught:
        read_replica(obj)
    assert caught.value.issues[0].path == field
    assert str(caught.value).startswith(f"{field}: ")
    assert caught.value.issues[0].reason == Reason.INVALID_SPEC
    assert isinstance(caught.value, ValueError)


def test_duplicate_request_names_are_rejected(build: Any) -> None:
    request = {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 1}
    obj = build.replica(workers=build.role(requests=[request, copy.deepcopy(request)]))
    with pytest.raises(InvalidInputError) as caught:
        read_replica(obj)
    assert caught.value.issues[0].path == "spec.workers.deviceRequests[1].name"


@pytest.mark.parametrize(
    ("roles", "field"),
    [
        ({"workers": True, "decode": True}, "spec.decode"),
        ({"decode": True}, "spec.prefill"),
        ({"prefill": True}, "spec.decode"),
    ],
)
def test_role_shapes_are_exclusive(build: Any, roles: dict[str, bool], field: str) -> None:
    obj = build.replica()
    spec = obj["spec"]
    if not roles.get("workers"):
        del spec["workers"]
    for name in ("decode", "prefill"):
        if roles.get(name):
            spec[name] = build.role()
    with pytest.raises(InvalidInputError) as caught:
        read_replica(obj)
    assert caught.value.issues[0].path == field


def test_cluster_parses(build: Any) -> None:
    cluster = read_cluster(build.cluster(backend="KServe", pools=("l4", "h100", "l4")))
    assert cluster.name == "prod-us-east"
    assert cluster.backend is BackendType.K_SERVE
    assert cluster.pools == ("h100", "l4")
    assert cluster.kubernetes_version == "1.34"


def test_cluster_backend_defaults_to_native(build: Any) -> None:
    assert read_cluster(build.cluster(backend=None)).backend is BackendType.NATIVE


@pytest.mark.parametrize(("spec", "expected"), [(None, "1.34"), ("1.36", "1.36")])
def test_cluster_kubernetes_version(build: Any, spec: str | None, expected: str) -> None:
    cluster = read_cluster(build.cluster(version=spec))
    assert cluster.kubernetes_version == expected
    assert cluster.minor == int(expected.split(".")[1])


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda o: o["spec"].update(backend={"type": "Dynamo"}), "spec.backend.type"),
        (
            lambda o: o["spec"].update(nodePools=[{"className": "x", "nodeCount": 1}]),
            "spec.nodePools[0].name",
        ),
        (lambda o: o["spec"].update(kubernetesVersion="1.33"), "spec.kubernetesVersion"),
        (lambda o: o.pop("metadata"), "metadata.name"),
        (lambda o: o.pop("spec"), "spec"),
    ],
)
def test_cluster_errors_name_the_field(build: Any, mutate: Any, field: str) -> None:
    obj = build.cluster()
    mutate(obj)
    with pytest.raises(InvalidInputError) as caught:
        read_cluster(obj)
    assert [issue.path for issue in caught.value.issues] == [field]


def test_every_problem_of_a_replica_is_named_at_once(build: Any) -> None:
    obj = build.replica(
        workers=build.role(
            topology={"data": 4, "dataLocal": 3},
            requests=[
                {"name": "GPU", "deviceClassName": "gpu.nvidia.com", "count": 1},
                {"name": "GPU", "deviceClassName": "Not A Class", "count": 1},
            ],
        )
    )
    del obj["metadata"]["namespace"]
    with pytest.raises(InvalidInputError) as caught:
        read_replica(obj)
    assert [issue.path for issue in caught.value.issues] == [
        "metadata.namespace",
        "spec.workers.deviceRequests[0].name",
        "spec.workers.deviceRequests[1].name",
        "spec.workers.deviceRequests[1].deviceClassName",
        "spec.workers.deviceRequests[1].name",
        "spec.workers.topology.dataLocal",
    ]
