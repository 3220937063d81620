"""A cluster's health from its Objects' Synced conditions, against a given now."""

from datetime import UTC, datetime
from typing import Any

import pytest

from modelplane.fleet.health import assess

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CONNECT = "connect failed: cannot create new client: dial tcp 10.0.0.1:443: i/o timeout"


def probe(status: str, message: str = "", since: str | None = None) -> dict[str, Any]:
    synced: dict[str, Any] = {"type": "Synced", "status": status, "message": message}
    if since is not None:
        synced["lastTransitionTime"] = since
    return {"status": {"conditions": [synced]}}


@pytest.mark.parametrize(
    ("probes", "healthy", "fragment"),
    [
        ([], True, "no Object has synced or failed yet"),
        ([None], True, "no Object has synced or failed yet"),
        ([probe("True"), probe("True")], True, "2 of 2 Objects reach the cluster"),
        (
            [probe("True"), probe("False", CONNECT, "2026-12-01T10:00:00Z")],
            True,
            "1 of 2 Objects reach the cluster",
        ),
        (
            [
                probe(
                    "False",
                    "observe failed: external resource does not exist",
                    "2026-11-01T00:00:00Z",
                )
            ],
            True,
            "1 of 1",
        ),
        (
            [probe("False", "create failed: cannot create object: denied", "2026-11-01T00:00:00Z")],
            True,
            "1 of 1",
        ),
        (
            [probe("False", CONNECT, "2026-12-01T11:58:00Z")],
            None,
            "since 2026-12-01T11:58:00Z; unhealthy once that lasts 300s",
        ),
        ([probe("False", CONNECT)], None, "when that began is not recorded"),
        (
            [
                probe("False", CONNECT, "2026-12-01T11:00:00Z"),
                probe("False", CONNECT, "2026-12-01T11:50:00Z"),
            ],
            False,
            "none of 2 Objects has synced since 2026-12-01T11:50:00Z: the cluster is unreachable",
        ),
    ],
)
def test_health(probes: list[Any], healthy: bool | None, fragment: str) -> None:
    verdict = assess(probes, NOW)
    assert verdict.healthy is healthy
    assert fragment in verdict.message
