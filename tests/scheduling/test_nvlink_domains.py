"""Multi-node NVLink domains: a multi-node replica takes all its nodes from one domain."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.scheduling.ledger import PoolLedger, nvlink_domains
from modelplane.scheduling.rejections import Rejection

from .builders import Obj, cluster, deployment, gpu, placements, pool, read_pool, request, run

GPU = request("gpu", 8, "true")


def nvl(name: str, nodes: int, domain: int) -> Obj:
    return {**pool(name, nodes, gpu(8)), "nvlinkDomainNodes": domain}


@pytest.mark.parametrize(
    ("nodes", "size", "domains"),
    [(36, 18, [18, 18]), (20, 18, [18, 2]), (4, 18, [4]), (5, 2, [2, 2, 1]), (0, 18, [])],
)
def test_a_pool_has_floor_domains_of_the_size_and_one_of_the_rest(
    nodes: int, size: int, domains: list[int]
) -> None:
    assert nvlink_domains(read_pool(nvl("p", nodes, size))) == domains


def test_a_pool_without_the_field_has_no_domains() -> None:
    assert PoolLedger.empty(read_pool(pool("p", 4, gpu(8)))).domains == []


def test_together_pods_take_one_domain_or_none() -> None:
    ledger = PoolLedger.empty(read_pool(nvl("p", 6, 3)))
    whole = ((8,),)
    assert ledger.place(whole, 2, together=True)
    assert ledger.domains == [1, 3]
    # Three nodes are free across the two domains, but only one domain holds two.
    assert ledger.place(whole, 2, together=True)
    assert ledger.domains == [1, 1]
    before = ledger.copy()
    assert not ledger.place(whole, 2, together=True)
    assert ledger.buckets == before.buckets and ledger.domains == before.domains
    # The same pods not bound to one domain still fit the two free nodes.
    assert ledger.place(whole, 2)
    assert ledger.domains == [0, 0]


def test_other_pods_take_whole_nodes_from_the_smallest_domain() -> None:
    ledger = PoolLedger.empty(read_pool(nvl("p", 5, 3)))
    assert ledger.domains == [3, 2]
    assert ledger.place(((8,),), 1)
    assert ledger.domains == [3, 1]
    assert ledger.place(((8,),), 3, together=True)
    assert ledger.domains == [0, 1]


def test_a_two_node_replica_needs_two_free_nodes_in_one_domain() -> None:
    topology = {"pipeline": 2}
    fleet = [cluster("a", nvl("rack", 4, 2))]
    decision = run(deployment(3, GPU, topology=topology), fleet)
    assert placements(decision) == ["a/0:rack", "a/1:rack"]
    # Four nodes in domains of three: one domain of three and one of one.
    decision = run(deployment(2, GPU, topology=topology), [cluster("a", nvl("rack", 4, 3))])
    assert placements(decision) == ["a/0:rack"]
    rejection = decision.trace[0].pools[0]
    assert rejection.reason is Rejection.NO_NVLINK_DOMAIN_ROOM
    assert "needs 2 free nodes in one NVLink domain" in rejection.message
    assert "the most any of its 2 domains has free is 1" in rejection.message


def test_single_node_workers_ignore_domains() -> None:
    decision = run(deployment(4, GPU), [cluster("a", nvl("rack", 4, 3))])
    assert placements(decision) == ["a/0:rack", "a/1:rack", "a/2:rack", "a/3:rack"]


@given(
    nodes=st.integers(0, 12),
    size=st.integers(2, 6),
    placements=st.lists(st.tuples(st.integers(1, 8), st.integers(1, 4), st.booleans()), max_size=8),
)
def test_domains_never_hold_more_than_the_pool_and_gangs_stay_in_one(
    nodes: int, size: int, placements: list[tuple[int, int, bool]]
) -> None:
    ledger = PoolLedger.empty(read_pool(nvl("p", nodes, size)))
    assert sum(ledger.domains) == nodes
    for gpus, pods, together in placements:
        before = list(ledger.domains)
        placed = ledger.place(((gpus,),), pods, together)
        if placed and together:
            assert max(before, default=0) >= pods
        assert sum(ledger.domains) <= ledger.whole_nodes
        assert all(0 <= free <= size for free in ledger.domains)
