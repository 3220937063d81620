"""Break after unroute: a serving replica the decision removes loses its ModelEndpoint
first, and is deleted once no ModelService of the namespace routes to it, it stops
serving, or the hold has passed (compose_model_deployment.retiring)."""

from dataclasses import dataclass, field
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner

from modelplane.core.vocabulary import CONTEXT_NOW
from modelplane_dev.testing import as_dict, request, run

from .asked import fetched, narrow_fetched
from .objects import A0, A1, FLEET, cluster, decided, deployment, observed_in_namespace, replica
from .test_endpoints import endpoint_object, url, with_url

NOW = "2026-11-27T12:00:00Z"
A_MINUTE_AGO = "2026-11-27T11:59:00Z"
FIVE_MINUTES_AGO = "2026-11-27T11:55:00Z"
SERVICES = "modelservices"


def running(name: str, index: int, *, serving: bool = True) -> dict[str, Any]:
    return observed_in_namespace(
        with_url(replica(name, "a", index, serving=serving), url(name, "a"))
    )


def routed_service(*replicas: str) -> dict[str, Any]:
    """A ModelService of the namespace whose route sends to `replicas` of kimi."""
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "chat", "namespace": "ml"},
        "spec": {"gatewayRef": {"name": "fleet"}, "endpoints": [{"deployment": {"name": "kimi"}}]},
        "status": {
            "endpoints": [
                {"deployment": "kimi", "replica": name, "cluster": "a", "weight": 10000}
                for name in replicas
            ]
        },
    }


def retiring_since(since: str) -> dict[str, Any]:
    """deployment(1) with A1 recorded as retiring since `since`."""
    obj = deployment(1)
    obj["status"] = {"retiring": [{"replica": A1, "cluster": "a", "since": since}]}
    return obj


TWO_ROUTED = {
    A0: running(A0, 0),
    A1: running(A1, 1),
    f"endpoint-{A0}": endpoint_object(A0, "a"),
    f"endpoint-{A1}": endpoint_object(A1, "a"),
}
# A1 after its first retiring reconcile: its endpoint is gone.
ONE_ROUTED = {A0: running(A0, 0), A1: running(A1, 1), f"endpoint-{A0}": endpoint_object(A0, "a")}


@dataclass
class Case:
    composite: dict[str, Any]
    observed: dict[str, dict[str, Any]]
    services: list[dict[str, Any]] | None
    """The namespace's ModelServices as fetched; None when not asked for."""
    resources: list[str]
    retiring: list[dict[str, Any]] | None
    events: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])


UNROUTED_EVENT = (
    "ReplicaRetiring",
    f"Unrouted replica {A1}: its ModelEndpoint is removed, and it is deleted once no "
    "ModelService routes to it (at most 5m)",
)


def deleted(why: str) -> tuple[str, str]:
    return ("ReplicaRetired", f"Deleted replica {A1}, unrouted before: {why}")


CASES = {
    "a scaled-down serving replica a route lists loses its endpoint and keeps running": Case(
        deployment(1),
        TWO_ROUTED,
        [routed_service(A0, A1)],
        [A0, A1, f"endpoint-{A0}"],
        [{"replica": A1, "cluster": "a", "since": NOW}],
        [UNROUTED_EVENT],
    ),
    "a scaled-down serving replica no route lists goes at once": Case(
        deployment(1),
        TWO_ROUTED,
        [routed_service(A0)],
        [A0, f"endpoint-{A0}"],
        None,
        [deleted("no ModelService of the namespace routes to it any more")],
    ),
    "a scaled-down replica that does not serve goes at once": Case(
        deployment(1),
        {
            A0: running(A0, 0),
            A1: running(A1, 1, serving=False),
            f"endpoint-{A0}": endpoint_object(A0, "a"),
        },
        None,
        [A0, f"endpoint-{A0}"],
        None,
    ),
    "a scaled-down serving replica with no endpoint goes at once": Case(
        deployment(1),
        ONE_ROUTED,
        None,
        [A0, f"endpoint-{A0}"],
        None,
    ),
    "a retiring replica a ModelService still routes to is kept": Case(
        retiring_since(A_MINUTE_AGO),
        ONE_ROUTED,
        [routed_service(A0, A1)],
        [A0, A1, f"endpoint-{A0}"],
        [{"replica": A1, "cluster": "a", "since": A_MINUTE_AGO}],
    ),
    "a retiring replica no ModelService routes to is deleted": Case(
        retiring_since(A_MINUTE_AGO),
        ONE_ROUTED,
        [routed_service(A0)],
        [A0, f"endpoint-{A0}"],
        None,
        [deleted("no ModelService of the namespace routes to it any more")],
    ),
    "with no ModelService at all a retiring replica is deleted": Case(
        retiring_since(A_MINUTE_AGO),
        ONE_ROUTED,
        [],
        [A0, f"endpoint-{A0}"],
        None,
        [deleted("no ModelService of the namespace routes to it any more")],
    ),
    "a ModelService that cannot be read holds the retiring replica": Case(
        retiring_since(A_MINUTE_AGO),
        ONE_ROUTED,
        [{**routed_service(A0), "status": {"endpoints": "everything"}}],
        [A0, A1, f"endpoint-{A0}"],
        [{"replica": A1, "cluster": "a", "since": A_MINUTE_AGO}],
    ),
    "after the hold a retiring replica goes even if a route lists it": Case(
        retiring_since(FIVE_MINUTES_AGO),
        ONE_ROUTED,
        [routed_service(A0, A1)],
        [A0, f"endpoint-{A0}"],
        None,
        [deleted("it has been unrouted for 5m, the longest a route may hold it")],
    ),
    "a retiring replica that stops serving goes": Case(
        retiring_since(A_MINUTE_AGO),
        {**ONE_ROUTED, A1: running(A1, 1, serving=False)},
        [routed_service(A0, A1)],
        [A0, f"endpoint-{A0}"],
        None,
        [deleted("it no longer serves")],
    ),
    "a retiring replica whose status cannot be read is kept while a route lists it": Case(
        retiring_since(A_MINUTE_AGO),
        {**ONE_ROUTED, A1: {**running(A1, 1), "status": {"conditions": "unreadable"}}},
        [routed_service(A0, A1)],
        [A0, A1, f"endpoint-{A0}"],
        [{"replica": A1, "cluster": "a", "since": A_MINUTE_AGO}],
    ),
    "a retiring time that cannot be read starts the hold again": Case(
        retiring_since("yesterday"),
        ONE_ROUTED,
        [routed_service(A0, A1)],
        [A0, A1, f"endpoint-{A0}"],
        [{"replica": A1, "cluster": "a", "since": NOW}],
    ),
}


def _run(case: Case) -> dict[str, Any]:
    replicas = [o for o in case.observed.values() if o["kind"] == "ModelReplica"]
    # Whether the call narrows or not, everything it may ask for is fetched.
    required = {**narrow_fetched(FLEET, replicas), **fetched(FLEET, replicas)}
    if case.services is not None:
        required[SERVICES] = case.services
    req = request(case.composite, required=required, observed=case.observed)
    req.context.update({CONTEXT_NOW: NOW})
    return as_dict(run(FunctionRunner(), req))


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_retiring(case: Case) -> None:
    got = _run(case)
    resources = got["desired"]["resources"]
    assert sorted(resources) == sorted(case.resources)
    if case.retiring:
        # Re-emitted exactly as it runs, and ready: it is leaving.
        assert resources[A1]["resource"]["spec"] == case.observed[A1]["spec"]
        assert resources[A1]["ready"] == "READY_TRUE"
    status = got["desired"]["composite"]["resource"]["status"]
    assert status.get("retiring") == case.retiring
    assert [e["replica"] for e in status.get("endpoints", [])] == [
        name for name in (A0, A1) if f"endpoint-{name}" in resources
    ]
    normal = [
        (r["reason"], r["message"])
        for r in got.get("results", [])
        if r["reason"] in ("ReplicaRetiring", "ReplicaRetired")
    ]
    assert normal == case.events
    asked = got.get("requirements", {}).get("resources", {})
    if case.services is not None:
        assert asked[SERVICES] == {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelService",
            "namespace": "ml",
        }
    else:
        assert SERVICES not in asked


def test_a_retiring_replica_holds_its_devices() -> None:
    """Not the decision's, but charged: cluster a (one replica's two nodes) is full while A1 retires,
    so the replacement of a scale back up goes elsewhere, never onto its devices."""
    small = [cluster("a", 2), cluster("b", 2)]
    obj = {**deployment(1), "status": {"retiring": [{"replica": A0, "cluster": "a", "since": NOW}]}}
    observed = {A0: running(A0, 0)}
    required = {**narrow_fetched(small, [observed[A0]]), **fetched(small, [observed[A0]])}
    required[SERVICES] = [routed_service(A0)]
    req = request(obj, required=required, observed=observed)
    req.context.update({CONTEXT_NOW: NOW})
    got = as_dict(run(FunctionRunner(), req))
    resources = got["desired"]["resources"]
    placed = [k for k, r in resources.items() if r["resource"]["spec"].get("clusterName") == "b"]
    assert len(placed) == 1
    assert resources[A0]["resource"]["spec"] == observed[A0]["spec"]
    assert got["desired"]["composite"]["resource"]["status"]["retiring"] == [
        {"replica": A0, "cluster": "a", "since": NOW}
    ]


def test_bad_input_keeps_a_retiring_replica_and_its_record() -> None:
    broken = retiring_since(A_MINUTE_AGO)
    broken["spec"]["replicas"] = "three"
    case = Case(broken, ONE_ROUTED, [routed_service(A0)], [], None)
    got = _run(case)
    assert A1 in got["desired"]["resources"]
    assert got["desired"]["composite"]["resource"]["status"]["retiring"] == [
        {"replica": A1, "cluster": "a", "since": A_MINUTE_AGO}
    ]


def test_a_scale_up_while_a_replica_retires_never_takes_its_name() -> None:
    """Scaled back up while A1 retires, on a fleet of one cluster with room: the new
    replica goes beside it under a name of its own, never A1's (which would replace
    A1 in place while a route may still send to it), and A1 keeps retiring."""
    obj = {**deployment(2), "status": retiring_since(A_MINUTE_AGO)["status"]}
    one = [cluster("a", 6)]
    replicas = [ONE_ROUTED[A0], ONE_ROUTED[A1]]
    required = {**narrow_fetched(one, replicas), **fetched(one, replicas)}
    required[SERVICES] = [routed_service(A0, A1)]
    req = request(obj, required=required, observed=ONE_ROUTED)
    req.context.update({CONTEXT_NOW: NOW})
    got = as_dict(run(FunctionRunner(), req))
    resources = got["desired"]["resources"]
    (new,) = set(resources) - {A0, A1, f"endpoint-{A0}"}
    assert resources[new]["resource"]["spec"]["index"] == 2
    assert resources[A1]["resource"]["spec"] == ONE_ROUTED[A1]["spec"]
    assert got["desired"]["composite"]["resource"]["status"]["retiring"] == [
        {"replica": A1, "cluster": "a", "since": A_MINUTE_AGO}
    ]


def test_a_retirement_under_way_decides_over_the_fleet() -> None:
    """A replica retiring (unrouted, waiting to go) was removed by a decision over the
    fleet, and what releases it is decided there too: the deployment asks for the
    whole fleet from the first call, though it is otherwise settled (its spec decided,
    more replicas composed than it wants, each naming its cluster)."""
    req = request(decided(retiring_since(A_MINUTE_AGO)), observed=ONE_ROUTED)
    req.context.update({CONTEXT_NOW: NOW})
    asked = as_dict(run(FunctionRunner(), req))["requirements"]["resources"]
    # The fleet's cluster list, and no cluster by name: the narrow path was never taken.
    assert sorted(asked) == ["inferenceclusters", SERVICES, "priorityclasses"]
