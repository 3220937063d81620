"""Integer weights: exact shares, rounded by largest remainder, deterministic."""

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from modelplane.traffic.weights import SCALE, distribute, shares

WEIGHTS = st.lists(st.tuples(st.integers(0, 1_000_000), st.integers(0, 4)), min_size=1, max_size=8)


def test_a_deployment_shares_its_weight_and_one_with_nothing_drops_out() -> None:
    # 60 over two replicas, 30 over none, 10 external.
    exact = shares([60, 30, 10], [2, 0, 1])
    assert exact == [Fraction(3, 7), Fraction(3, 7), Fraction(1, 7)]
    assert distribute(exact) == [4286, 4286, 1428]


def test_ties_go_to_the_earlier_backend() -> None:
    assert distribute([Fraction(1, 3)] * 3) == [3334, 3333, 3333]


def test_a_backend_with_any_share_gets_traffic() -> None:
    weights = distribute(shares([1_000_000, 1], [1, 1]))
    assert weights == [9999, 1]


def test_nothing_to_route_is_all_zero() -> None:
    assert distribute(shares([0, 5], [3, 0])) == [0, 0, 0]
    assert distribute([]) == []


@given(WEIGHTS)
def test_weights_sum_to_the_scale_and_follow_the_shares(entries: list[tuple[int, int]]) -> None:
    weights, groups = [w for w, _ in entries], [n for _, n in entries]
    exact = shares(weights, groups)
    assert len(exact) == sum(groups)
    got = distribute(exact)
    assert got == distribute(list(exact))  # deterministic
    if sum(exact) == 0:
        assert got == [0] * len(exact)
        return
    assert sum(exact) == 1
    assert sum(got) == SCALE
    for share, weight in zip(exact, got, strict=True):
        assert (share == 0) == (weight == 0)
        # Within one unit of the exact amount, but for the units that keep tiny
        # shares above zero (taken from the largest).
        assert abs(weight - share * SCALE) < 1 + len(exact)
