"""Rendering is a pure function: same inputs, identical outputs, inputs untouched."""

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models.inference_cluster import BackendType, FailureMode

from modelplane.core.issues import InvalidInputError
from modelplane.workloads import ClusterInput, RenderedReplica, render_replica
from modelplane.workloads.model import GatewayInput

from .inputs import read_replica

DEGREE = st.sampled_from([1, 2, 4])


@st.composite
def _topology(draw: st.DrawFn) -> dict[str, int]:
    local = draw(DEGREE)
    return {
        "tensor": draw(DEGREE),
        "pipeline": draw(DEGREE),
        "data": local * draw(DEGREE),
        "dataLocal": local,
    }


@st.composite
def _role(draw: st.DrawFn) -> dict[str, Any]:
    requests = draw(
        st.lists(
            st.builds(
                lambda name, cls, count: {"name": name, "deviceClassName": cls, "count": count},
                st.sampled_from(["gpu", "nic", "mem"]),
                st.sampled_from(["gpu.nvidia.com", "rdma.example.com"]),
                st.integers(1, 8),
            ),
            max_size=3,
            unique_by=lambda r: r["name"],
        )
    )
    labels = draw(
        st.dictionaries(st.sampled_from(["app", "team", "tier"]), st.sampled_from(["a", "b"]))
    )
    return {
        "count": draw(st.integers(1, 12)),
        "topology": draw(_topology()),
        "nodePoolName": draw(st.sampled_from(["h100", "l4"])),
        "deviceRequests": requests,
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "engine", "image": "vllm", "args": ["--x"]}]},
        },
    }


@st.composite
def _replica(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "deploymentName": draw(st.sampled_from(["kimi", "a-much-longer-deployment-name"])),
        "clusterName": "c1",
        "index": draw(st.integers(0, 20)),
    }
    if draw(st.booleans()):
        spec["workers"] = draw(_role())
    else:
        spec["decode"], spec["prefill"] = draw(_role()), draw(_role())
    if draw(st.booleans()):
        spec["model"] = {"name": "kimi-k2", "uri": "hf://moonshotai/Kimi-K2-Instruct"}
    name = draw(st.from_regex(r"[a-z][-a-z0-9]{0,50}[a-z0-9]", fullmatch=True))
    namespace = draw(st.from_regex(r"[a-z][-a-z0-9]{0,61}[a-z0-9]", fullmatch=True))
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


GATEWAY = GatewayInput(
    class_name="eg",
    picker_image="epp:v1",
    failure_mode=FailureMode.FAIL_OPEN,
    address="gw.example",
)


def _cluster(backend: str, gateway: GatewayInput | None = None) -> ClusterInput:
    return ClusterInput(
        name="c1", backend=BackendType(backend), pools=("h100", "l4"), gateway=gateway
    )


def _dump(rendered: RenderedReplica) -> str:
    return json.dumps(
        [[o.key, o.manifest, o.readiness, o.management_policies] for o in rendered.objects()]
        + [[w.key, w.role, w.kind.kind] for w in rendered.workloads]
    )


@settings(max_examples=60, deadline=None)
@given(_replica(), st.sampled_from(["Native", "KServe"]), st.sampled_from([None, GATEWAY]))
def test_rendering_is_deterministic(
    obj: dict[str, Any], backend: str, gateway: GatewayInput | None
) -> None:
    original = copy.deepcopy(obj)
    replica = read_replica(obj)
    cluster = _cluster(backend, gateway)
    try:
        first = render_replica(replica, cluster)
    except InvalidInputError as error:
        # Refused here only on KServe: a topology mixing pipeline and data, or no
        # model URI for KServe to download.
        assert backend == "KServe"
        assert error.issues[0].path.endswith(".topology") or (
            error.issues[0].path == "spec.model.uri" and "model" not in obj["spec"]
        )
        return
    second = render_replica(read_replica(copy.deepcopy(obj)), cluster)
    assert first == second
    assert _dump(first) == _dump(second)
    keys = [o.key for o in first.objects()]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    # Neither the observed object nor the parsed input was touched.
    assert obj == original
    assert render_replica(replica, cluster) == first


@settings(max_examples=30, deadline=None)
@given(_replica())
def test_every_workload_carries_identity_and_pool(obj: dict[str, Any]) -> None:
    replica = read_replica(obj)
    workloads = render_replica(replica, _cluster("Native")).workloads
    assert len(workloads) == len(replica.roles)
    for role, workload in zip(replica.roles, workloads, strict=True):
        labels = workload.manifest["metadata"]["labels"]
        assert labels["modelplane.ai/replica"] == replica.name
        assert labels["modelplane.ai/role"] == role.placed.role
        expected_kind = (
            "Deployment" if role.placed.topology.nodes_per_worker == 1 else "LeaderWorkerSet"
        )
        assert workload.manifest["kind"] == workload.kind.kind == expected_kind
        assert workload.role == role.placed.role
        assert f'"modelplane.ai/pool": "{role.placed.pool}"' in json.dumps(workload.manifest)
