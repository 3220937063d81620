"""Where each replica is reached: status.endpoints, one ModelEndpoint per serving replica,
and the model the replicas carry."""

from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .asked import narrow_fetched, widened
from .objects import A0, A1, B0, FLEET, decided, deployment, observed_in_namespace, replica


def with_url(obj: dict[str, Any], url: str) -> dict[str, Any]:
    obj.setdefault("status", {})["url"] = url
    return obj


def url(name: str, cluster: str) -> str:
    return f"http://gw.{cluster}.example/mp-ml/{name}"


def endpoint_object(name: str, cluster: str) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelEndpoint",
        "metadata": {
            "name": name,
            "labels": {"modelplane.ai/deployment": "kimi", "modelplane.ai/replica": name},
        },
        "spec": {
            "deploymentName": "kimi",
            "replicaName": name,
            "clusterName": cluster,
            "url": url(name, cluster),
        },
    }


def _run(
    observed: dict[str, Any], obj: dict[str, Any] | None = None, *, keeps: bool = False
) -> dict[str, Any]:
    """The response to the last call of the reconcile's fetch loop of a deployment
    decided before (`decided`): its own clusters alone when the decision keeps (which
    `keeps` requires; these replicas all name a cluster, so the loop begins there),
    else with the fleet besides; the endpoints are the same either way."""
    replicas = [o for o in observed.values() if o["kind"] == "ModelReplica"]
    composite = decided(obj or deployment(3))
    wide = as_dict(
        run(
            FunctionRunner(),
            request(composite, required=widened(FLEET, replicas), observed=observed),
        )
    )
    narrow = as_dict(
        run(
            FunctionRunner(),
            request(composite, required=narrow_fetched(FLEET, replicas), observed=observed),
        )
    )
    if "inferenceclusters" in narrow.get("requirements", {}).get("resources", {}):
        assert not keeps, "the decision on its own clusters widened"
        return wide
    status = narrow["desired"]["composite"]["resource"]["status"]
    assert narrow["desired"]["resources"] == wide["desired"]["resources"]
    assert status["endpoints"] == wide["desired"]["composite"]["resource"]["status"]["endpoints"]
    return narrow


RUNNING = {
    A0: observed_in_namespace(with_url(replica(A0, "a", 0, serving=True), url(A0, "a"))),
    # Placed and reached at a URL, but not serving: listed, no endpoint.
    A1: observed_in_namespace(with_url(replica(A1, "a", 1), url(A1, "a"))),
    # Serving, but its cluster's gateway has no address yet: nothing to list.
    B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
}


def test_a_serving_replica_with_a_url_gets_an_endpoint() -> None:
    got = _run(RUNNING, keeps=True)
    assert got["desired"]["composite"]["resource"]["status"]["endpoints"] == [
        {"replica": A0, "cluster": "a", "url": url(A0, "a"), "serving": True},
        {"replica": A1, "cluster": "a", "url": url(A1, "a"), "serving": False},
    ]
    resources = got["desired"]["resources"]
    assert sorted(resources) == sorted([A0, A1, B0, f"endpoint-{A0}"])
    assert resources[f"endpoint-{A0}"] == {
        "resource": endpoint_object(A0, "a"),
        "ready": "READY_FALSE",
    }


def test_an_endpoint_is_ready_once_crossplane_reports_it_ready() -> None:
    observed = {
        **RUNNING,
        f"endpoint-{A0}": {
            **endpoint_object(A0, "a"),
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
    }
    got = _run(observed, keeps=True)
    assert got["desired"]["resources"][f"endpoint-{A0}"]["ready"] == "READY_TRUE"


def test_a_replica_that_stops_serving_loses_its_endpoint_in_the_same_reconcile() -> None:
    stopped = {
        **RUNNING,
        A0: observed_in_namespace(with_url(replica(A0, "a", 0), url(A0, "a"))),
        f"endpoint-{A0}": endpoint_object(A0, "a"),
    }
    got = _run(stopped, keeps=True)
    assert not any(key.startswith("endpoint-") for key in got["desired"]["resources"])
    assert [
        e["serving"] for e in got["desired"]["composite"]["resource"]["status"]["endpoints"]
    ] == [
        False,
        False,
    ]


def test_an_unreadable_deployment_keeps_its_endpoints_and_their_status() -> None:
    observed = {**RUNNING, f"endpoint-{A0}": endpoint_object(A0, "a")}
    broken = deployment(3)
    broken["spec"]["replicas"] = "three"
    broken["status"] = {"endpoints": [{"replica": A0, "url": url(A0, "a"), "serving": True}]}
    got = _run(observed, broken)
    assert f"endpoint-{A0}" in got["desired"]["resources"]
    assert got["desired"]["composite"]["resource"]["status"]["endpoints"] == [
        {"replica": A0, "url": url(A0, "a"), "serving": True}
    ]


def test_replicas_carry_the_model_with_its_served_name_resolved() -> None:
    named = deployment(1)
    named["spec"]["model"] = {"uri": "hf://moonshotai/Kimi-K2-Instruct"}
    got = _run({}, named)
    (replica_,) = [
        r["resource"]
        for r in got["desired"]["resources"].values()
        if r["resource"]["kind"] == "ModelReplica"
    ]
    assert replica_["spec"]["model"] == {"name": "kimi", "uri": "hf://moonshotai/Kimi-K2-Instruct"}
    named["spec"]["model"] = {"name": "kimi-k2"}
    got = _run({}, named)
    (replica_,) = [r["resource"] for r in got["desired"]["resources"].values()]
    assert replica_["spec"]["model"] == {"name": "kimi-k2"}


UNREADABLE_STATUSES = [
    pytest.param({"conditions": "Serving"}, "status.conditions is not a list of conditions"),
    pytest.param({"conditions": {"type": "Serving"}}, "status.conditions is not a list"),
    pytest.param({"conditions": [["Serving", "True"]]}, "status.conditions[0] is not a condition"),
    pytest.param({"conditions": [{"type": 7, "status": "True"}]}, "status.conditions[0].type"),
]


@pytest.mark.parametrize(("status", "problem"), UNREADABLE_STATUSES)
def test_a_replica_whose_status_cannot_be_read_keeps_its_endpoint(
    status: Any, problem: str
) -> None:
    """Hold what was composed: an unreadable status is no news that the replica stopped."""
    broken = observed_in_namespace(replica(A0, "a", 0))
    broken["status"] = status
    observed = {**RUNNING, A0: broken, f"endpoint-{A0}": endpoint_object(A0, "a")}
    got = _run(observed, keeps=True)
    resources = got["desired"]["resources"]
    assert resources[f"endpoint-{A0}"]["resource"] == endpoint_object(A0, "a")
    assert resources[A0]["ready"] == "READY_TRUE"
    endpoints = got["desired"]["composite"]["resource"]["status"]["endpoints"]
    assert endpoints[0] == {"replica": A0, "cluster": "a", "url": url(A0, "a"), "serving": True}
    warnings = [r for r in got["results"] if r["severity"] == "SEVERITY_WARNING"]
    assert [w["reason"] for w in warnings] == ["ReplicaStatusUnreadable"]
    assert warnings[0]["message"].startswith(f"ModelReplica {A0}: {problem}")
    assert warnings[0]["message"].endswith("its ModelEndpoint is held until it can be read")


def test_an_unreadable_status_composes_no_endpoint_that_was_not_there() -> None:
    """Holding is keeping, not inventing: no endpoint was composed, none appears."""
    broken = observed_in_namespace(with_url(replica(A0, "a", 0), url(A0, "a")))
    broken["status"]["conditions"] = "Serving"
    got = _run({**RUNNING, A0: broken}, keeps=True)
    assert f"endpoint-{A0}" not in got["desired"]["resources"]
    (warning,) = [r for r in got["results"] if r["severity"] == "SEVERITY_WARNING"]
    assert warning["message"].endswith("it is read as not serving until it can be read")
