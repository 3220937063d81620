"""Ledgers kept across decisions (`ChargedLedgers`, owned by the function runner): a
ledger built before and copied is the ledger charging the same pool the same way
builds, field for field; a fresh owner builds, a reused one reuses, its bound evicts,
and two owners share nothing."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.scheduling.ledger import ChargedLedgers, Demand, PoolLedger, order_charges
from modelplane.scheduling.model import Pool
from modelplane.scheduling.packing import Packer

from .builders import gpu, nic, pool, read_pool

Charges = list[tuple[Demand, int, bool]]


def _state(ledger: PoolLedger) -> tuple[object, ...]:
    # Items, not dicts: the order a ledger met its vectors in is part of what is copied.
    return (
        ledger.pool,
        ledger.capacity,
        list(ledger.buckets.items()),
        ledger.overcommitted,
        list(ledger.pods.items()),
        ledger.domains,
    )


def _built(nodes: int, per_node: int, domain: int, charges: Charges) -> PoolLedger:
    ledger = PoolLedger.empty(_pool(nodes, per_node, domain), Packer())
    for demand, pods, together in order_charges(charges):
        ledger.charge(demand, pods, together)
    return ledger


def _pool(nodes: int, per_node: int, domain: int) -> Pool:
    return replace(
        read_pool(pool("p", nodes, gpu(per_node), nic(8), gpu(4, name="small"))),
        nvlink_domain_nodes=domain,
    )


def _demand(draw: st.DrawFn, per_node: int) -> Demand:
    ways = draw(st.integers(1, 2))
    return tuple(
        (draw(st.integers(0, per_node + 1)), 0, draw(st.integers(0, 5))) for _ in range(ways)
    )


@st.composite
def ledgers(draw: st.DrawFn) -> tuple[int, int, int, Charges]:
    per_node = draw(st.sampled_from([1, 2, 4, 8]))
    nodes = draw(st.integers(0, 6))
    domain = draw(st.sampled_from([0, 0, 2, 4]))
    charges = [
        (_demand(draw, per_node), draw(st.integers(1, 3)), draw(st.booleans()))
        for _ in range(draw(st.integers(0, 6)))
    ]
    return nodes, per_node, domain, charges


@settings(max_examples=300, deadline=None)
@given(ledgers())
def test_a_kept_ledger_is_the_ledger_charging_builds(case: tuple[int, int, int, Charges]) -> None:
    nodes, per_node, domain, charges = case
    expected = _state(_built(nodes, per_node, domain, charges))
    kept = ChargedLedgers()
    for _ in range(2):  # built, then kept
        the_pool = _pool(nodes, per_node, domain)
        ledger = kept.charged(the_pool, order_charges(charges), Packer())
        assert _state(ledger) == expected
        assert ledger.pool is the_pool


def test_a_copy_is_the_callers_to_change() -> None:
    the_pool = _pool(2, 8, 0)
    charges = order_charges([(((4, 0, 0),), 1, False)])
    kept = ChargedLedgers()
    first = kept.charged(the_pool, charges, Packer())
    assert first.place(((8, 0, 0),), 1)
    second = kept.charged(the_pool, charges, Packer())
    assert _state(second) == _state(_built(2, 8, 0, list(charges)))
    assert second.place(((8, 0, 0),), 1)
    assert not second.place(((8, 0, 0),), 1)


def test_another_pool_of_the_same_shape_keeps_its_own_name() -> None:
    charges = order_charges([(((2, 0, 0),), 1, False)])
    kept = ChargedLedgers()
    a = kept.charged(_pool(3, 8, 0), charges, Packer())
    b = kept.charged(replace(_pool(3, 8, 0), name="other"), charges, Packer())
    assert (a.pool.name, b.pool.name) == ("p", "other")
    assert _state(a)[1:] == _state(b)[1:]


def _charges() -> Charges:
    return order_charges([(((2, 0, 0),), 1, False)])


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The node counts of the pools a ledger was built for (not copied from a kept one)."""
    seen: list[int] = []
    empty = PoolLedger.empty

    def counting(the_pool: Pool, packer: Packer | None = None) -> PoolLedger:
        seen.append(the_pool.nodes)
        return empty(the_pool, packer)

    monkeypatch.setattr(PoolLedger, "empty", counting)
    return seen


def test_a_fresh_owner_builds_and_a_reused_one_reuses(built: list[int]) -> None:
    kept = ChargedLedgers()
    kept.charged(_pool(3, 8, 0), _charges(), Packer())
    kept.charged(_pool(3, 8, 0), _charges(), Packer())
    assert built == [3]


def test_owners_do_not_share(built: list[int]) -> None:
    ChargedLedgers().charged(_pool(3, 8, 0), _charges(), Packer())
    ChargedLedgers().charged(_pool(3, 8, 0), _charges(), Packer())
    assert built == [3, 3]


def test_the_bound_evicts_the_least_recently_used(built: list[int]) -> None:
    kept = ChargedLedgers(entries=2)
    for nodes in (3, 4, 3, 5, 3, 4):
        kept.charged(_pool(nodes, 8, 0), _charges(), Packer())
    # 3 was used again before 5 came, so 4 went out and is built again.
    assert built == [3, 4, 5, 4]
    assert len(kept) == 2
