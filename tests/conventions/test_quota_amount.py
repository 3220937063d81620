"""A queue's quota is read in bounded time whatever exponent it is written with."""

import pytest

from modelplane.conventions.schedulers.quota import count, quota_count

INT64_MAX = (1 << 63) - 1


@pytest.mark.parametrize(
    ("value", "used", "quota"),
    [
        ("8", 8, 8),
        ("2500m", 3, 2),
        ("1e3", 1000, 1000),
        # 10**999999999 was built before: a reconcile that never ended.
        ("1e999999999", INT64_MAX, INT64_MAX),
        ("-1e999999999", -INT64_MAX, -INT64_MAX),
        ("1e-999999999", 1, 0),
        ("123e-4", 1, 0),
        ("0e999999999", 0, 0),
    ],
)
def test_quantities_are_counted_in_whole_devices(value: str, used: int, quota: int) -> None:
    assert (count(value), quota_count(value)) == (used, quota)
