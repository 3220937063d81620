"""A cluster's health from its own and its replicas' Objects' Synced conditions,
against a given now."""

from datetime import UTC, datetime
from typing import Any

import pytest

from modelplane.core.vocabulary import Reason
from modelplane.fleet.health import Reachability, assess, assess_replicas, combine, reason_for

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CONNECT = "connect failed: cannot create new client: dial tcp 10.0.0.1:443: i/o timeout"


def probe(status: str, message: str = "", since: str | None = None) -> dict[str, Any]:
    synced: dict[str, Any] = {"type": "Synced", "status": status, "message": message}
    if since is not None:
        synced["lastTransitionTime"] = since
    return {"status": {"conditions": [synced]}}


@pytest.mark.parametrize(
    ("probes", "reachable", "fragment"),
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
            "since 2026-12-01T11:58:00Z; unreachable once that lasts 300s",
        ),
        # A failure whose start is not recorded starts when first seen: now.
        ([probe("False", CONNECT)], None, "since 2026-12-01T12:00:00Z; unreachable once"),
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
def test_health(probes: list[Any], reachable: bool | None, fragment: str) -> None:
    verdict = assess(probes, NOW)
    assert verdict.reachable is reachable
    assert fragment in verdict.message


def replica_object(status: str, message: str = "", since: str | None = None) -> dict[str, Any]:
    return probe(status, message, since)


FAILED_AT = "2026-12-01T11:50:00Z"


@pytest.mark.parametrize(
    ("objects", "reachable", "reason", "fragment"),
    [
        ([], None, None, None),
        # Composed but not reconciled by the provider yet: nothing observed.
        ([{"metadata": {"name": "new"}}, None], None, None, None),
        (
            [replica_object("True"), replica_object("False", CONNECT, FAILED_AT)],
            True,
            "",
            "its replicas' Objects reach the cluster",
        ),
        (
            [replica_object("False", CONNECT, "2026-12-01T11:58:00Z")] * 3,
            None,
            "",
            "none of 3 replica Objects has synced since 2026-12-01T11:58:00Z; "
            "unreachable once that lasts 300s",
        ),
        (
            [
                replica_object("False", CONNECT, "2026-12-01T10:00:00Z"),
                replica_object("False", CONNECT, FAILED_AT),
            ],
            False,
            "ReplicaObjectsFailing",
            f"none of 2 replica Objects has synced since {FAILED_AT}: the cluster takes "
            "none of its replicas' Objects",
        ),
        # A refused manifest is an answer from the cluster, not a failure to reach it.
        (
            [replica_object("False", "create failed: cannot create object: denied", FAILED_AT)],
            True,
            "",
            "its replicas' Objects reach the cluster",
        ),
    ],
)
def test_replica_objects(
    objects: list[Any], reachable: bool | None, reason: str | None, fragment: str | None
) -> None:
    verdict = assess_replicas(objects, NOW)
    if fragment is None:
        assert verdict is None
        return
    assert verdict is not None
    assert (verdict.reachable, verdict.reason) == (reachable, reason)
    assert fragment in verdict.message


def test_a_thousand_failing_replica_objects_are_counted_not_named() -> None:
    objects = [
        {**replica_object("False", CONNECT, FAILED_AT), "metadata": {"name": f"object-{i}"}}
        for i in range(1000)
    ]
    verdict = assess_replicas(objects, NOW)
    assert verdict is not None and verdict.reachable is False
    assert "none of 1000 replica Objects" in verdict.message
    assert "object-" not in verdict.message


CONNECTED = Reachability(True, "2 of 2 Objects reach the cluster")
WAITING = Reachability(
    None, "none of 2 Objects has synced since X; unreachable once that lasts 300s"
)
LOST = Reachability(False, "none of 2 Objects has synced since X", Reason.CLUSTER_UNREACHABLE)
REPLICAS_OK = Reachability(True, "its replicas' Objects reach the cluster")
REPLICAS_LOST = Reachability(False, "none of 4 replica Objects", Reason.REPLICA_OBJECTS_FAILING)


@pytest.mark.parametrize(
    ("connection", "replicas", "reachable", "reason", "message"),
    [
        (CONNECTED, None, True, "ClusterReachable", CONNECTED.message),
        (
            CONNECTED,
            REPLICAS_OK,
            True,
            "ClusterReachable",
            f"{CONNECTED.message}; {REPLICAS_OK.message}",
        ),
        (
            CONNECTED,
            REPLICAS_LOST,
            False,
            "ReplicaObjectsFailing",
            f"{REPLICAS_LOST.message}; {CONNECTED.message}",
        ),
        (
            WAITING,
            REPLICAS_LOST,
            False,
            "ReplicaObjectsFailing",
            f"{REPLICAS_LOST.message}; {WAITING.message}",
        ),
        (WAITING, REPLICAS_OK, None, "SyncFailing", f"{WAITING.message}; {REPLICAS_OK.message}"),
        (
            LOST,
            REPLICAS_LOST,
            False,
            "ClusterUnreachable",
            f"{LOST.message}; {REPLICAS_LOST.message}",
        ),
    ],
)
def test_combine(
    connection: Reachability,
    replicas: Reachability | None,
    reachable: bool | None,
    reason: str,
    message: str,
) -> None:
    verdict = combine(connection, replicas)
    assert (verdict.reachable, reason_for(verdict), verdict.message) == (reachable, reason, message)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# Every Object failing since 11:50; one re-stamped at 11:58 when its error text changed.
RESTAMPED = [
    probe("False", CONNECT, "2026-12-01T11:50:00Z"),
    probe("False", "context deadline exceeded", "2026-12-01T11:58:00Z"),
]


@pytest.mark.parametrize(
    ("probes", "carried", "reachable", "since"),
    [
        # First seen: the latest transition, the moment the last Object joined.
        (RESTAMPED, None, None, "2026-12-01T11:58:00Z"),
        # Carried from the last call: a re-stamped message does not restart the clock.
        (RESTAMPED, "2026-12-01T11:50:00Z", False, "2026-12-01T11:50:00Z"),
        # One Object syncing ends the state, whatever was carried.
        ([probe("True"), *RESTAMPED], "2026-12-01T11:00:00Z", True, None),
        # A carried start after now (another clock) is taken as now.
        (RESTAMPED, "2026-12-01T13:00:00Z", None, "2026-12-01T12:00:00Z"),
        # A transition recorded after now cannot push the start past now either.
        ([probe("False", CONNECT, "2026-12-01T12:30:00Z")], None, None, "2026-12-01T12:00:00Z"),
    ],
)
def test_the_grace_runs_from_when_the_state_began(
    probes: list[Any], carried: str | None, reachable: bool | None, since: str | None
) -> None:
    verdict = assess(probes, NOW, at(carried) if carried else None)
    replicas = assess_replicas(probes, NOW, at(carried) if carried else None)
    assert replicas is not None
    for found in (verdict, replicas):
        assert found.reachable is reachable
        assert found.since == (at(since) if since else None)
        if since is not None:
            assert f"since {since}" in found.message
