"""The per-node capacity ledger of one pool."""

import pytest

from modelplane.scheduling.ledger import PoolLedger, order_charges

from .builders import gpu, nic, pool, read_pool


def _ledger(nodes: int = 2, per_node: int = 8) -> PoolLedger:
    return PoolLedger.empty(read_pool(pool("p", nodes, gpu(per_node), nic(8))))


PLACEMENTS = [
    # (id, pods to place in order as (gpus, pods), how many succeed)
    ("whole nodes", [(8, 1), (8, 1), (8, 1)], 2),
    ("small pods share a node", [(2, 1)] * 9, 8),
    ("best fit keeps a whole node for a large pod", [(4, 1), (2, 1), (8, 1)], 3),
    ("a multi-pod worker needs every pod placed", [(8, 3)], 0),
    ("leftovers across nodes cannot be pooled", [(5, 1), (5, 1), (6, 1)], 2),
]


@pytest.mark.parametrize(
    ("pods", "succeed"), [c[1:] for c in PLACEMENTS], ids=[c[0] for c in PLACEMENTS]
)
def test_place(pods: list[tuple[int, int]], succeed: int) -> None:
    ledger = _ledger()
    placed = sum(ledger.place(((gpus, 0),), count) for gpus, count in pods)
    assert placed == succeed


def test_failed_place_leaves_ledger_unchanged() -> None:
    ledger = _ledger()
    ledger.place(((6, 0),), 1)
    before = dict(ledger.buckets)
    assert not ledger.place(((4, 0),), 3)
    assert ledger.buckets == before


def test_committed_usage_beyond_the_pool_spends_it() -> None:
    ledger = _ledger(nodes=1)
    ledger.charge(((8, 0),), 2)
    assert ledger.overcommitted
    assert not ledger.place(((1, 0),), 1)
    assert "exceed the pool" in ledger.describe_free()


def test_whole_node_charges() -> None:
    ledger = _ledger(nodes=3)
    ledger.charge_whole_nodes(2)
    assert ledger.place(((8, 0),), 1)
    assert not ledger.place(((1, 0),), 1)
    ledger = _ledger(nodes=1)
    ledger.charge(((1, 0),), 1)
    ledger.charge_whole_nodes(1)
    assert ledger.overcommitted


def test_describe_free_lists_claimable_devices_only() -> None:
    ledger = _ledger(nodes=3)
    ledger.place(((3, 0),), 1)
    assert ledger.describe_free() == "free: 2 nodes with gpu 8/8; 1 node with gpu 5/8"


def test_charges_are_ordered_largest_first() -> None:
    assert order_charges([(((1, 0),), 1), (((8, 0),), 1), (((4, 0),), 2)]) == [
        (((8, 0),), 1),
        (((4, 0),), 2),
        (((1, 0),), 1),
    ]
