"""The render clock: one fixed now per render, from --now or the world's latest time."""

import pytest

from modelplane_cli.render.clock import EPOCH, parse_now, render_clock


def test_the_latest_time_the_world_records_is_now() -> None:
    world = [
        {"metadata": {"creationTimestamp": "2026-11-30T08:00:00Z"}},
        {
            "status": {
                "conditions": [
                    {"type": "Synced", "lastTransitionTime": "2026-12-01T10:00:00+00:00"},
                    {"type": "Ready", "lastTransitionTime": "not a time"},
                ]
            }
        },
    ]
    assert render_clock(world) == "2026-12-01T10:00:00Z"
    assert render_clock(world, "2027-01-01T00:00:00Z") == "2027-01-01T00:00:00Z"


def test_a_world_that_records_no_time_renders_at_the_epoch() -> None:
    assert render_clock([{"metadata": {"name": "x"}}]) == EPOCH


def test_now_must_be_an_rfc_3339_time() -> None:
    assert parse_now("2026-12-01T11:00:00+01:00") == "2026-12-01T10:00:00Z"
    with pytest.raises(ValueError, match="is not an RFC 3339 time"):
        parse_now("yesterday")
