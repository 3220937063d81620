"""When an unused cache leaves a cluster (`caching.retention`), and the times it records."""

from datetime import UTC, datetime, timedelta

import pytest

from modelplane.caching.retention import Use, keeps
from modelplane.fleet.health import format_time, parse_time

NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
DAY = timedelta(hours=24)


@pytest.mark.parametrize(
    ("used", "selected", "unused_since", "retention", "want"),
    [
        (True, False, "2026-01-01T00:00:00Z", DAY, Use(True, None)),
        (False, True, None, DAY, Use(True, None)),
        # Unused from now on: kept, and the moment recorded.
        (False, False, None, DAY, Use(True, "2026-01-02T12:00:00Z")),
        (False, False, None, timedelta(0), Use(False, "2026-01-02T12:00:00Z")),
        (False, False, "2026-01-02T00:00:00Z", DAY, Use(True, "2026-01-02T00:00:00Z")),
        (False, False, "2026-01-01T11:00:00Z", DAY, Use(False, "2026-01-01T11:00:00Z")),
        # Another offset is the same instant, recorded in UTC: 17:30+05:30 is 12:00Z.
        (False, False, "2026-01-01T17:30:00+05:30", DAY, Use(False, "2026-01-01T12:00:00Z")),
        (False, False, "2026-01-01T18:30:00+05:30", DAY, Use(True, "2026-01-01T13:00:00Z")),
    ],
)
def test_an_unused_cache_stays_for_its_retention(
    used: bool, selected: bool, unused_since: str | None, retention: timedelta, want: Use
) -> None:
    assert keeps(used, selected, unused_since, retention, NOW) == want


@pytest.mark.parametrize(
    ("text", "stamped"),
    [
        ("2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z"),
        ("2026-01-01T10:00:00+05:30", "2026-01-01T04:30:00Z"),
        ("2026-01-01T10:00:00-08:00", "2026-01-01T18:00:00Z"),
    ],
)
def test_a_time_read_is_stamped_as_the_same_instant_in_utc(text: str, stamped: str) -> None:
    parsed = parse_time(text)
    assert parsed is not None
    assert format_time(parsed) == stamped
