"""Reachable: the cluster's Objects fail to sync for longer than the grace, against the
request's fixed now (the render clock), never the wall clock."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane.core.vocabulary import CONTEXT_NOW
from modelplane_dev.testing import as_dict, request, run

from .stack_objects import NAME, OBSERVED_READY, REQUIRED, cluster

Obj = dict[str, Any]
UNREACHABLE = {
    "type": "Synced",
    "status": "False",
    "reason": "ReconcileError",
    "message": "connect failed: cannot create new client: dial tcp 10.0.0.1:443: i/o timeout",
    "lastTransitionTime": "2026-12-01T10:00:00Z",
}


def unreachable(body: Obj) -> Obj:
    return {**body, "status": {"conditions": [UNREACHABLE]}}


def reachable_condition(now: str, observed: dict[str, Obj]) -> Obj:
    req = request(cluster(), required=REQUIRED, observed=observed)
    req.context.update({CONTEXT_NOW: now})
    conditions = as_dict(run(FunctionRunner(), req))["conditions"]
    (found,) = [c for c in conditions if c["type"] == "Reachable"]
    return found


@pytest.mark.parametrize(
    ("now", "status", "reason"),
    [
        ("2026-12-01T10:04:59Z", "STATUS_CONDITION_UNKNOWN", "SyncFailing"),
        ("2026-12-01T10:05:00Z", "STATUS_CONDITION_FALSE", "ClusterUnreachable"),
    ],
)
def test_a_cluster_no_object_reaches_is_unreachable_after_the_grace(
    now: str, status: str, reason: str
) -> None:
    observed = {key: unreachable(body) for key, body in OBSERVED_READY.items()}

    found = reachable_condition(now, observed)

    assert (found["status"], found["reason"]) == (status, reason)


def test_one_object_reaching_the_cluster_keeps_it_reachable() -> None:
    keys = sorted(OBSERVED_READY)
    observed = {k: unreachable(OBSERVED_READY[k]) for k in keys[1:]} | {
        keys[0]: OBSERVED_READY[keys[0]]
    }

    found = reachable_condition("2030-01-01T00:00:00Z", observed)

    assert (found["status"], found["reason"]) == ("STATUS_CONDITION_TRUE", "ClusterReachable")
    assert found["message"] == f"1 of {len(keys)} Objects reach the cluster"


def replica_object(name: str, provider_config: str = NAME) -> Obj:
    """An Object a ModelReplica composed onto the cluster, failing to reach it."""
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "labels": {"modelplane.ai/cluster": NAME},
        },
        "spec": {
            "forProvider": {"manifest": {"apiVersion": "v1", "kind": "Service"}},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": provider_config},
        },
        "status": {"conditions": [UNREACHABLE]},
    }


def with_replica_objects(now: str, found: list[Obj]) -> Obj:
    req = request(
        cluster(), required={**REQUIRED, "replica-objects": found}, observed=OBSERVED_READY
    )
    req.context.update({CONTEXT_NOW: now})
    conditions = as_dict(run(FunctionRunner(), req))["conditions"]
    (reachable,) = [c for c in conditions if c["type"] == "Reachable"]
    return reachable


def test_replica_objects_failing_past_the_grace_make_a_connected_cluster_unreachable() -> None:
    found = [replica_object(f"chat-{i}") for i in range(3)]

    reachable = with_replica_objects("2026-12-01T10:05:00Z", found)

    probes = len(OBSERVED_READY)
    assert reachable == {
        "type": "Reachable",
        "status": "STATUS_CONDITION_FALSE",
        "reason": "ReplicaObjectsFailing",
        "message": "none of 3 replica Objects has synced since 2026-12-01T10:00:00Z: "
        "the cluster takes none of its replicas' Objects; its replicas are replaced "
        f"elsewhere; {probes} of {probes} Objects reach the cluster",
        "target": "TARGET_COMPOSITE",
    }


def test_replica_objects_within_the_grace_leave_health_unknown() -> None:
    reachable = with_replica_objects("2026-12-01T10:04:59Z", [replica_object("chat-0")])

    assert (reachable["status"], reachable["reason"]) == ("STATUS_CONDITION_UNKNOWN", "SyncFailing")


def test_objects_through_another_provider_config_are_not_the_clusters() -> None:
    # Labelled for this cluster by hand, but the provider sends them elsewhere.
    found = [replica_object("stray", provider_config="prod-eu-west")]

    reachable = with_replica_objects("2030-01-01T00:00:00Z", found)

    assert (reachable["status"], reachable["reason"]) == (
        "STATUS_CONDITION_TRUE",
        "ClusterReachable",
    )
    assert "replica" not in reachable["message"]


def restamped(body: Obj, index: int) -> Obj:
    """Every probe failing since 10:00; the first re-stamped at 10:08, when its error
    text changed (crossplane-runtime compares messages, so a new one is a new time)."""
    if index:
        return unreachable(body)
    late = {
        **UNREACHABLE,
        "message": "connect failed: context deadline exceeded",
        "lastTransitionTime": "2026-12-01T10:08:00Z",
    }
    return {**body, "status": {"conditions": [late]}}


def reachability_call(
    composite_status: Obj | None, observed: dict[str, Obj], now: str
) -> tuple[Obj, Obj | None, list[Obj]]:
    composite = cluster()
    if composite_status is not None:
        composite["status"] = composite_status
    req = request(composite, required=REQUIRED, observed=observed)
    req.context.update({CONTEXT_NOW: now})
    rsp = as_dict(run(FunctionRunner(), req))
    (found,) = [c for c in rsp["conditions"] if c["type"] == "Reachable"]
    status = rsp["desired"]["composite"]["resource"].get("status", {})
    events = [r for r in rsp.get("results", []) if r.get("reason") == "ReachabilityUnreadable"]
    return found, status.get("reachability"), events


FAILING = {k: restamped(body, i) for i, (k, body) in enumerate(sorted(OBSERVED_READY.items()))}
SINCE_10 = {"reachability": {"objectsFailingSince": "2026-12-01T10:00:00Z"}}
UNREADABLE_EVENT = {
    "severity": "SEVERITY_WARNING",
    "message": "status.reachability.objectsFailingSince: 'yesterday' is not an RFC 3339 "
    "time; taken as absent, so the grace is measured from the Objects' own transition times",
    "reason": "ReachabilityUnreadable",
    "target": "TARGET_COMPOSITE",
}


def shape_event(what: str) -> Obj:
    return {
        **UNREADABLE_EVENT,
        "message": f"{what}; taken as absent, so the grace is measured from the Objects' "
        "own transition times",
    }


@pytest.mark.parametrize(
    ("composite_status", "observed", "reason", "published", "events"),
    [
        # First seen at 10:12: the latest transition (10:08) is the start, published.
        (None, FAILING, "SyncFailing", {"objectsFailingSince": "2026-12-01T10:08:00Z"}, []),
        # Carried from the call before: the re-stamp at 10:08 does not restart the grace.
        (SINCE_10, FAILING, "ClusterUnreachable", SINCE_10["reachability"], []),
        # One probe syncs: the state ended, and its start is no longer published.
        (
            SINCE_10,
            {**FAILING, **dict([sorted(OBSERVED_READY.items())[0]])},
            "ClusterReachable",
            None,
            [],
        ),
        # The function's own field corrupted: a Warning naming it, taken as absent.
        (
            {"reachability": {"objectsFailingSince": "yesterday"}},
            FAILING,
            "SyncFailing",
            {"objectsFailingSince": "2026-12-01T10:08:00Z"},
            [UNREADABLE_EVENT],
        ),
        # Of another shape than the XRD's (a world written by hand): the same, and the
        # cluster stays readable.
        (
            {"reachability": {"objectsFailingSince": 5}},
            FAILING,
            "SyncFailing",
            {"objectsFailingSince": "2026-12-01T10:08:00Z"},
            [shape_event("status.reachability.objectsFailingSince is not a string")],
        ),
        (
            {"reachability": "since ten"},
            FAILING,
            "SyncFailing",
            {"objectsFailingSince": "2026-12-01T10:08:00Z"},
            [shape_event("status.reachability is not an object")],
        ),
    ],
)
def test_the_grace_runs_from_the_start_the_status_carries(
    composite_status: Obj | None,
    observed: dict[str, Obj],
    reason: str,
    published: Obj | None,
    events: list[Obj],
) -> None:
    found, reachability, warned = reachability_call(
        composite_status, observed, "2026-12-01T10:12:00Z"
    )

    assert (found["reason"], reachability, warned) == (reason, published, events)


def test_a_reconcile_held_on_bad_input_does_not_carry_an_outages_start() -> None:
    """Bad input observes no Object: an outage's start carried through it would date a
    later outage from this one. Dropped, the grace restarts from the Objects' times."""
    composite = cluster()
    composite["status"] = dict(SINCE_10)
    composite["spec"]["nodePools"] = "not a list"
    req = request(composite, required=REQUIRED, observed=FAILING)
    req.context.update({CONTEXT_NOW: "2026-12-01T10:12:00Z"})
    rsp = as_dict(run(FunctionRunner(), req))
    assert any(c["status"] == "STATUS_CONDITION_FALSE" for c in rsp["conditions"])
    published = rsp["desired"]["composite"].get("resource", {}).get("status", {})
    assert "reachability" not in published
    assert set(rsp["desired"]["resources"]) == set(FAILING)  # everything composed is kept
