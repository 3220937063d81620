"""The unreachability grace measured from when every Object began failing, as the
InferenceCluster's status remembers it, not from the latest transition time.

crossplane-runtime re-stamps a `Synced` condition's `lastTransitionTime` whenever its
message changes, and a dead API server's error text varies (an i/o timeout, a
context deadline); the scenario renders the outage twice: first within the grace
(the start is published), then after one Object's error text changed, past the
grace counted from the first failure but within it counted from the new text.
"""

from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet
from .test_drain_failover import (
    EAST,
    FAILED_SINCE,
    Obj,
    _probes,
    _set_synced,
    add_west,
    on_cluster,
    unreachable_east,
)
from .test_examples import assert_valid

RESTAMPED = "2026-12-01T10:08:00Z"


def new_error_text(objects: list[Obj]) -> None:
    """One of prod-us-east's Objects reports another transport error from 10:08."""
    first = sorted(_probes(objects, EAST), key=lambda o: o["metadata"]["name"])[0]
    _set_synced(
        first,
        {
            "type": "Synced",
            "status": "False",
            "reason": "ReconcileError",
            "message": "connect failed: Get https://prod-us-east: context deadline exceeded",
            "lastTransitionTime": RESTAMPED,
        },
    )


def test_a_new_error_text_does_not_restart_the_grace(
    fleet: Fleet, manifest_validator: ManifestValidator
) -> None:
    waiting = fleet.edit(unreachable_east, now="2026-12-01T10:02:00Z")
    reachability = waiting.one("InferenceCluster", EAST)["status"]["reachability"]
    assert reachability == {"objectsFailingSince": FAILED_SINCE}
    assert waiting.condition("InferenceCluster", EAST, "Reachable")["reason"] == "SyncFailing"

    # 10:09: nine minutes into the outage, one minute after the new text.
    over = waiting.edit(new_error_text, now="2026-12-01T10:09:00Z")

    assert over.result.converged, over.result.errors
    health = over.condition("InferenceCluster", EAST, "Reachable")
    assert (health["status"], health["reason"]) == ("False", "ClusterUnreachable")
    assert health["message"].startswith(f"none of {len(_probes(over.objects, EAST))} Objects ")
    assert f"has synced since {FAILED_SINCE}" in health["message"]
    assert on_cluster(over, EAST) == []
    assert_valid(over, manifest_validator)


def test_the_start_goes_once_an_object_syncs(fleet: Fleet) -> None:
    waiting = fleet.edit(unreachable_east, now="2026-12-01T10:02:00Z")

    def one_syncs(objects: list[Obj]) -> None:
        first = sorted(_probes(objects, EAST), key=lambda o: o["metadata"]["name"])[0]
        _set_synced(first, {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"})

    back = waiting.edit(one_syncs, now="2026-12-01T10:09:00Z")

    assert "reachability" not in back.one("InferenceCluster", EAST)["status"]
    assert back.condition("InferenceCluster", EAST, "Reachable")["status"] == "True"


def test_a_cluster_without_a_recorded_start_is_judged_by_its_objects_times(fleet: Fleet) -> None:
    # Upgrade: a cluster already failing when the recorded start ships has none.
    def failing_before_the_upgrade(objects: list[Obj]) -> None:
        add_west(objects)
        for probe in _probes(objects, EAST):
            _set_synced(
                probe,
                {
                    "type": "Synced",
                    "status": "False",
                    "reason": "ReconcileError",
                    "message": "connect failed: dial tcp: i/o timeout",
                    "lastTransitionTime": FAILED_SINCE,
                },
            )

    over = fleet.edit(failing_before_the_upgrade, now="2026-12-01T10:06:00Z")

    health = over.condition("InferenceCluster", EAST, "Reachable")
    assert (health["status"], health["reason"]) == ("False", "ClusterUnreachable")
    assert on_cluster(over, EAST) == []
