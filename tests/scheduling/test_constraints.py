"""DRA constraints in the fleet scheduler: aligned devices, counted per device entry."""

from typing import Any

import pytest

from modelplane.scheduling import Origin
from modelplane.scheduling.rejections import Rejection

from .builders import (
    cluster,
    declaring,
    deployment,
    gpu,
    nic,
    placements,
    pool,
    replica,
    request,
    run,
)

Obj = dict[str, Any]

PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
GPU = request("gpu", 4, "arch == Hopper")
NIC = request("nic", 1)


def rooted(device: Obj, root: str) -> Obj:
    return {**device, "attributes": {**device.get("attributes", {}), PCIE_ROOT: {"string": root}}}


def dra_nic(name: str) -> Obj:
    return {**nic(1, name=name), "claim": "DRA", "deviceClassName": "nic"}


def aligned(dep: Obj, *names: str) -> Obj:
    dep["spec"]["nodeSelector"]["constraints"] = [
        {"requests": list(names) or ["gpu", "nic"], "matchAttribute": PCIE_ROOT}
    ]
    return dep


def two_roots(nodes: int = 1) -> Obj:
    """Per node: 4 GPUs and a NIC on root r0, 4 GPUs and a NIC on root r1."""
    return pool(
        "roots",
        nodes,
        rooted(gpu(4, name="gpu-r0"), "r0"),
        rooted(gpu(4, name="gpu-r1"), "r1"),
        rooted(dra_nic("nic-r0"), "r0"),
        rooted(dra_nic("nic-r1"), "r1"),
    )


def split() -> Obj:
    """4 GPUs on r0; 2 GPUs and the only NIC on r1."""
    return pool(
        "split",
        1,
        rooted(gpu(4, name="gpu-r0"), "r0"),
        rooted(gpu(2, name="gpu-r1"), "r1"),
        rooted(dra_nic("nic-r1"), "r1"),
    )


def test_one_node_holds_one_aligned_replica_per_root() -> None:
    decision = run(aligned(deployment(3, GPU, NIC)), [cluster("a", two_roots())])
    assert placements(decision) == ["a/0:roots", "a/1:roots"]
    assert decision.trace[0].reason is Rejection.INSUFFICIENT_CAPACITY


def test_the_constraint_decides_where_unaligned_devices_would_fit() -> None:
    assert placements(run(deployment(1, GPU, NIC), [cluster("a", split())])) == ["a/0:split"]
    decision = run(aligned(deployment(1, GPU, NIC)), [cluster("a", split())])
    assert placements(decision) == []
    assert decision.trace[0].pools[0].reason is Rejection.DEVICES_NOT_ALIGNED


def test_the_replica_records_the_constraint_on_what_it_claims() -> None:
    decision = run(aligned(deployment(1, GPU, NIC)), [cluster("a", two_roots())])
    (workers,) = decision.replicas[0].roles
    assert workers.as_dict()["constraints"] == [
        {"requests": ["gpu", "nic"], "matchAttribute": PCIE_ROOT}
    ]


def test_a_request_matched_only_by_synthetic_devices_leaves_the_constraint() -> None:
    # The NIC is Synthetic here: placement aligns it, the claim cannot name it.
    synthetic = pool(
        "roots", 1, rooted(gpu(4, name="gpu-r0"), "r0"), rooted(nic(1, name="nic-r0"), "r0")
    )
    decision = run(
        aligned(deployment(1, GPU, request("nic", 1, "link == infiniband"))),
        [cluster("a", synthetic)],
    )
    (workers,) = decision.replicas[0].roles
    assert workers.as_dict()["constraints"] == [{"requests": ["gpu"], "matchAttribute": PCIE_ROOT}]


def test_a_held_replica_keeps_its_recorded_constraints() -> None:
    recorded = replica("a", 0)
    recorded["spec"]["workers"]["constraints"] = [
        {"requests": ["gpu"], "matchAttribute": PCIE_ROOT}
    ]
    decision = run(deployment(1), [declaring(cluster("a"), "h100")], [recorded])
    (held,) = decision.replicas
    assert held.origin is Origin.HELD
    assert held.roles[0].as_dict()["constraints"] == [
        {"requests": ["gpu"], "matchAttribute": PCIE_ROOT}
    ]


def _typed_roots(gpu_root: Obj, nic_root: Obj) -> Obj:
    return pool(
        "typed",
        1,
        {**gpu(4, name="gpu-r"), "attributes": {"arch": {"string": "Hopper"}, PCIE_ROOT: gpu_root}},
        {**dra_nic("nic-r"), "attributes": {PCIE_ROOT: nic_root}},
    )


@pytest.mark.parametrize(
    ("gpu_root", "nic_root", "placed"),
    [
        ({"int": 1}, {"int": 1}, ["a/0:typed"]),
        ({"version": "1.0.0"}, {"version": "1.0.0"}, ["a/0:typed"]),
        # rev-cel F6: the allocator's matchAttributeConstraint compares values of one
        # kind only; Python's 1 == True and the shared text must not align these.
        ({"int": 1}, {"bool": True}, []),
        ({"int": 0}, {"bool": False}, []),
        ({"version": "1.0.0"}, {"string": "1.0.0"}, []),
    ],
)
def test_a_constraint_aligns_values_of_one_kind_only(
    gpu_root: Obj, nic_root: Obj, placed: list[str]
) -> None:
    decision = run(
        aligned(deployment(1, GPU, NIC)), [cluster("a", _typed_roots(gpu_root, nic_root))]
    )
    assert placements(decision) == placed
    if not placed:
        assert decision.trace[0].pools[0].reason is Rejection.DEVICES_NOT_ALIGNED
