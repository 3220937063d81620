"""Drain and failover previewed round by round: a NoExecute taint, an unreachable cluster.

The main example fleet runs kimi-k2 on prod-us-east (a LeaderWorkerSet) and prod-eu-west,
and deepseek-r1 disaggregated on prod-us-east. Each scenario adds prod-us-west, a copy
of prod-us-east, then makes prod-us-east something its replicas must leave, and renders
the change one round at a time: at no round does a deployment serve fewer replicas
than before the change, and in the end nothing runs on prod-us-east. An unreachable
cluster is one none of whose own Objects has synced for longer than the grace, by the
render clock the test fixes; a cluster that takes none of its replicas' Objects (they
carry its name in `modelplane.ai/cluster`) while its own still sync is unreachable too.
"""

from collections import Counter
from typing import Any

import pytest

from modelplane.core.vocabulary import RESERVED_CONDITION_TYPES
from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, find
from .test_examples import assert_valid

Obj = dict[str, Any]


EAST = "prod-us-east"
WEST = "prod-us-west"
DRAIN = {"key": "example.com/maintenance", "value": "2026-12-01", "effect": "NoExecute"}
LAST_ROUND = 12


def _may_serve(condition: Obj) -> bool:
    """Serving, or stranded on an unreachable cluster (Unknown, ClusterUnreachable):
    not counted as available, but kept until replaced, and perhaps serving."""
    if condition.get("type") != "Serving":
        return False
    said = (condition.get("status"), condition.get("reason"))
    return said[0] == "True" or said == ("Unknown", "ClusterUnreachable")


def serving(objects: list[Obj]) -> Counter[str]:
    """ModelReplicas per deployment that serve or may: none of them is lost."""
    found: Counter[str] = Counter()
    for obj in objects:
        conditions = obj.get("status", {}).get("conditions", [])
        if obj["kind"] == "ModelReplica" and any(_may_serve(c) for c in conditions):
            found[obj["spec"]["deploymentName"]] += 1
    return found


def on_cluster(fleet: Fleet, cluster: str) -> list[str]:
    return sorted(
        o["spec"]["deploymentName"]
        for o in fleet.all("ModelReplica")
        if o["spec"]["clusterName"] == cluster
    )


def add_west(objects: list[Obj]) -> None:
    east = find(objects, "InferenceCluster", EAST)
    objects.append(
        {
            "apiVersion": east["apiVersion"],
            "kind": "InferenceCluster",
            "metadata": {"name": WEST, "labels": {"tier": "production", "region": "us-west"}},
            "spec": east["spec"] | {"taints": []},
        }
    )


def taint_east(objects: list[Obj]) -> None:
    add_west(objects)
    find(objects, "InferenceCluster", EAST)["spec"]["taints"] = [DRAIN]


FAILED_SINCE = "2026-12-01T10:00:00Z"
LATER = "2026-12-01T10:30:00Z"


def _objects_labelled(objects: list[Obj], label: str, cluster: str) -> list[Obj]:
    return [
        o
        for o in objects
        if o["kind"] == "Object" and o["metadata"].get("labels", {}).get(label) == cluster
    ]


def _probes(objects: list[Obj], cluster: str) -> list[Obj]:
    """The Objects the cluster composed itself: what its Reachable condition reads."""
    return _objects_labelled(objects, "crossplane.io/composite", cluster)


def replica_objects(objects: list[Obj], cluster: str) -> list[Obj]:
    """The Objects ModelReplicas composed onto the cluster, found by its label."""
    return _objects_labelled(objects, "modelplane.ai/cluster", cluster)


def _set_synced(obj: Obj, synced: Obj) -> None:
    kept = [c for c in obj["status"]["conditions"] if c["type"] != "Synced"]
    obj["status"]["conditions"] = [*kept, synced]


def _failing_since(message: str) -> Obj:
    return {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": message,
        "lastTransitionTime": FAILED_SINCE,
    }


def unreachable_east(objects: list[Obj]) -> None:
    """prod-us-west joins; none of prod-us-east's Objects has synced since FAILED_SINCE."""
    add_west(objects)
    failed = _failing_since("connect failed: cannot create new client: dial tcp: i/o timeout")
    for probe in _probes(objects, EAST):
        _set_synced(probe, failed)


def east_takes_no_replica_objects(objects: list[Obj]) -> None:
    """prod-us-west joins; prod-us-east's own Objects sync, but none of its replicas'
    Objects has synced since FAILED_SINCE."""
    add_west(objects)
    failing = replica_objects(objects, EAST)
    assert failing and not set(map(id, failing)) & set(map(id, _probes(objects, EAST)))
    failed = _failing_since(
        "cannot get object: Get https://prod-us-east: context deadline exceeded"
    )
    for obj in failing:
        _set_synced(obj, failed)


def reachable_again(objects: list[Obj]) -> None:
    for probe in _probes(objects, EAST):
        _set_synced(probe, {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"})
    find(objects, "ModelDeployment", "kimi-k2")["spec"]["replicas"] = 3


@pytest.mark.parametrize(
    ("change", "now", "why"),
    [
        (
            taint_east,
            None,
            "its cluster is tainted example.com/maintenance=2026-12-01:NoExecute, not tolerated",
        ),
        (unreachable_east, LATER, "its cluster is unreachable (Reachable=False)"),
        (east_takes_no_replica_objects, LATER, "its cluster is unreachable (Reachable=False)"),
    ],
    ids=["NoExecute", "unreachable", "replica-objects-failing"],
)
def test_replicas_move_without_ever_serving_fewer(
    fleet: Fleet, change: Any, now: str | None, why: str, manifest_validator: ManifestValidator
) -> None:
    before = serving(fleet.objects)
    assert before["kimi-k2"] == 2 and before["deepseek-r1"] == 1
    flight = fleet.edit_rounds(change, LAST_ROUND - 1, now=now)
    for rounds, in_flight in enumerate(flight, start=1):
        current = serving(in_flight.objects)
        assert all(current[name] >= count for name, count in before.items()), (rounds, current)
    # Converged within the rounds looked at, the last is the whole render.
    done = flight[-1] if flight[-1].result.converged else fleet.edit(change, now=now)
    assert done.result.converged, done.result.errors
    assert_valid(done, manifest_validator)
    assert on_cluster(done, EAST) == []
    assert on_cluster(done, WEST) == ["deepseek-r1", "kimi-k2"]
    assert serving(done.objects) == before
    removed = [e["message"] for e in done.result.events if e["reason"] == "ReplicaRemoved"]
    assert len(removed) == 2
    assert all(f"moved ({why}): its replacement serves" in m for m in removed), removed


def test_an_unreachable_cluster_within_the_grace_keeps_its_replicas(fleet: Fleet) -> None:
    waiting = fleet.edit(unreachable_east, now="2026-12-01T10:04:00Z")
    assert waiting.result.converged, waiting.result.errors
    health = waiting.condition("InferenceCluster", EAST, "Reachable")
    assert (health["status"], health["reason"]) == ("Unknown", "SyncFailing")
    assert on_cluster(waiting, EAST) == ["deepseek-r1", "kimi-k2"]


def test_a_cluster_that_fails_over_takes_replicas_again_once_reachable(fleet: Fleet) -> None:
    over = fleet.edit(unreachable_east, now=LATER)
    health = over.condition("InferenceCluster", EAST, "Reachable")
    assert (health["status"], health["reason"]) == ("False", "ClusterUnreachable")
    # The engine drops what functions set of the types Crossplane reserves, as
    # Crossplane does: failover reads a condition a control plane keeps.
    kept = {c["type"] for c in over.one("InferenceCluster", EAST)["status"]["conditions"]}
    assert kept & RESERVED_CONDITION_TYPES == {"Ready", "Synced", "Responsive"}  # Crossplane's own
    back = over.edit(reachable_again, now=LATER)
    assert back.result.ok, back.result.errors
    assert back.condition("InferenceCluster", EAST, "Reachable")["status"] == "True"
    # Nothing moves back to improve the picture; the next replica goes to prod-us-east.
    assert on_cluster(back, EAST) == ["kimi-k2"]
    assert on_cluster(back, WEST) == ["deepseek-r1", "kimi-k2"]


def test_replica_objects_failing_past_the_grace_make_the_cluster_unreachable(fleet: Fleet) -> None:
    count = len(replica_objects(fleet.objects, EAST))
    first = fleet.edit(east_takes_no_replica_objects, rounds=1, now=LATER)
    health = first.condition("InferenceCluster", EAST, "Reachable")
    assert (health["status"], health["reason"]) == ("False", "ReplicaObjectsFailing")
    assert health["message"].startswith(
        f"none of {count} replica Objects has synced since {FAILED_SINCE}: "
        "the cluster takes none of its replicas' Objects; its replicas are replaced elsewhere; "
    )
    assert "Objects reach the cluster" in health["message"]  # its own Objects sync


def test_replica_objects_failing_within_the_grace_keep_the_replicas(fleet: Fleet) -> None:
    waiting = fleet.edit(east_takes_no_replica_objects, now="2026-12-01T10:04:00Z")
    assert waiting.result.converged, waiting.result.errors
    health = waiting.condition("InferenceCluster", EAST, "Reachable")
    assert (health["status"], health["reason"]) == ("Unknown", "SyncFailing")
    assert on_cluster(waiting, EAST) == ["deepseek-r1", "kimi-k2"]


def drain_east_without_surge(objects: list[Obj]) -> None:
    """As taint_east, every deployment rolling with maxSurge 0 and maxUnavailable 1."""
    taint_east(objects)
    for obj in objects:
        if obj["kind"] == "ModelDeployment":
            obj["spec"]["strategy"] = {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def test_a_drain_without_surge_moves_within_max_unavailable(fleet: Fleet) -> None:
    before = serving(fleet.objects)
    flight = fleet.edit_rounds(drain_east_without_surge, LAST_ROUND - 1)
    for rounds, in_flight in enumerate(flight, start=1):
        current = serving(in_flight.objects)
        assert all(current[name] >= count - 1 for name, count in before.items()), (rounds, current)
    done = flight[-1] if flight[-1].result.converged else fleet.edit(drain_east_without_surge)
    assert done.result.converged, done.result.errors
    assert on_cluster(done, EAST) == []
    assert serving(done.objects) == before
    removed = [e["message"] for e in done.result.events if e["reason"] == "ReplicaRemoved"]
    assert removed and all("it makes room within maxUnavailable 1" in m for m in removed), removed
