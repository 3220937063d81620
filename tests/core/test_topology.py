"""The one Topology the scheduler and the renderer share."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane import scheduling
from modelplane.core.placement import PlacedRole
from modelplane.core.topology import Topology


@pytest.mark.parametrize(
    ("topology", "nodes"),
    [
        (Topology(), 1),
        (Topology(tensor=8), 1),
        (Topology(tensor=8, pipeline=2), 2),
        (Topology(tensor=4, data=8, data_local=2), 4),
        (Topology(tensor=1, data=4, data_local=4), 1),
        (Topology(tensor=8, pipeline=3, data=4, data_local=2), 6),
    ],
)
def test_nodes_per_worker(topology: Topology, nodes: int) -> None:
    assert topology.nodes_per_worker == nodes


@pytest.mark.parametrize(
    ("topology", "workers", "pods"),
    [
        (Topology(), 1, 1),
        (Topology(tensor=8), 3, 3),
        (Topology(pipeline=2, data=4, data_local=2), 3, 12),
    ],
)
def test_pods_of_several_workers(topology: Topology, workers: int, pods: int) -> None:
    assert topology.pods(workers) == pods


def test_scheduler_roles_count_pods_through_the_topology() -> None:
    topology = Topology(pipeline=2, data=4, data_local=2)
    wanted = scheduling.Role("decode", (), workers=3, topology=topology)
    recorded = PlacedRole("decode", "h100", 3, topology, ())
    assert wanted.pods == recorded.pods == topology.pods(3) == 12


def test_as_dict_writes_every_degree_under_its_api_name() -> None:
    topology = Topology(tensor=8, pipeline=2, data=4, data_local=2)
    assert topology.as_dict() == {"tensor": 8, "pipeline": 2, "data": 4, "dataLocal": 2}
    assert Topology().as_dict() == {"tensor": 1, "pipeline": 1, "data": 1, "dataLocal": 1}


def test_is_frozen_and_hashable() -> None:
    topology = Topology(tensor=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        topology.tensor = 4  # type: ignore[misc]
    assert {topology, Topology(tensor=2)} == {Topology(tensor=2)}


def test_the_scheduler_uses_this_type() -> None:
    # The renderer reads it through `core.placement.PlacedRole`, the record it shares.
    assert scheduling.Topology is Topology


@given(
    tensor=st.integers(1, 16),
    pipeline=st.integers(1, 16),
    local=st.integers(1, 16),
    nodes_per_stage=st.integers(1, 16),
)
def test_each_pipeline_stage_spans_data_over_data_local_nodes(
    tensor: int, pipeline: int, local: int, nodes_per_stage: int
) -> None:
    topology = Topology(tensor, pipeline, local * nodes_per_stage, local)
    assert topology.nodes_per_worker == pipeline * nodes_per_stage
    assert topology.nodes_per_worker * topology.data_local == pipeline * topology.data
