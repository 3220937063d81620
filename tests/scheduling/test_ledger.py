"""The per-node capacity ledger of one pool."""

import pytest

from modelplane.scheduling import packing
from modelplane.scheduling.ledger import PoolLedger, order_charges
from modelplane.scheduling.packing import MAX_PODS, Packer, needs_search, pack

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


def test_describe_free_lists_claimable_devices_only() -> None:
    ledger = _ledger(nodes=3)
    ledger.place(((3, 0),), 1)
    assert ledger.describe_free() == "free: 2 nodes with gpu 8/8; 1 node with gpu 5/8"


def test_charges_are_ordered_largest_first() -> None:
    charges = [(((1, 0),), 1, False), (((8, 0),), 1, False), (((4, 0),), 2, True)]
    assert order_charges(charges) == [
        (((8, 0),), 1, False),
        (((4, 0),), 2, True),
        (((1, 0),), 1, False),
    ]


def test_a_pod_takes_whichever_vector_fits_best() -> None:
    ledger = PoolLedger.empty(read_pool(pool("p", 1, gpu(4, name="a"), gpu(4, name="b"))))
    either = ((4, 0), (0, 4))
    assert ledger.place(either, 2)
    assert not ledger.place(either, 1)


def test_best_fit_errs_and_an_exact_repack_recovers() -> None:
    # 2, 2 then 3s: best fit puts two 3s beside the 2s and strands a 1 and a 2; the
    # pool holds four 3s only as 2+3+3 on each node.
    ledger = _ledger()
    ledger.charge(((2, 0),), 2)
    assert all(ledger.place(((3, 0),), 1) for _ in range(4))
    assert not ledger.place(((1, 0),), 1)
    assert ledger.pods == {((2, 0),): 2, ((3, 0),): 4}


def test_pods_that_divide_a_node_are_never_repacked() -> None:
    assert not needs_search((8, 0), [((4, 0),), ((2, 0),), ((8, 0),)])
    assert needs_search((8, 0), [((3, 0),)])
    assert needs_search((8, 0), [((4, 0), (0, 4))])


def test_the_exact_search_is_bounded() -> None:
    # Far more pods than the search will place: it gives up rather than run long.
    assert pack((8,), 400, [(((3,),), MAX_PODS + 1)]) is None
    assert pack((8,), 2, [(((3,),), 4), (((2,),), 2)]) == {(0,): 2}
    assert pack((8,), 2, [(((3,),), 5), (((2,),), 1)]) is None


def test_ledgers_sharing_a_packer_search_each_pool_state_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ledgers of one decision share its packer: clusters stamped from one class
    holding the same pods search once; a fresh packer (another decision) searches again."""
    searched: list[object] = []
    real = packing._pack  # pyright: ignore[reportPrivateUsage]

    def counting(*key: object) -> object:
        searched.append(key)
        return real(*key)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(packing, "_pack", counting)

    def placed(packer: Packer) -> dict[tuple[int, ...], int]:
        ledger = PoolLedger.empty(read_pool(pool("p", 2, gpu(8))), packer)
        ledger.charge(((2,),), 2)
        assert ledger.place(((3,),), 4)  # best fit leaves no node room for the fourth
        return ledger.buckets

    shared = Packer()
    first, second = placed(shared), placed(shared)
    assert first == second == {(0,): 2} and len(searched) == len(shared) == 1
    assert placed(Packer()) == first and len(searched) == 2
