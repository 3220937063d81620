"""compose-model-service: what a bad edit or a missing dependency does to what is routed."""

from typing import Any

import pytest
from compose_model_service.fn import FunctionRunner

from modelplane_dev.testing import as_dict, requirements_only, run

from .objects import REQUIREMENTS, condition, hub_cluster, request, required, service
from .test_fn import STEADY

# What a bad edit or a missing dependency does: everything routed before stays, as
# it is, with its published status, and a condition says why.
RUNNING = {
    key: {
        **value["resource"],
        "metadata": {**value["resource"]["metadata"], "namespace": "chat-team"},
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]},
    }
    for key, value in STEADY["desired"]["resources"].items()
}
PUBLISHED = STEADY["desired"]["composite"]["resource"]["status"]
# A younger service whose route holds the hostname: it keeps it, whatever the age.
TAKEN = {
    **service(
        hostname="taken.models.example.com",
        name="taken",
        created="2027-01-01T00:00:00Z",
        namespace="other-team",
    ),
    "status": {"address": "http://taken.models.example.com"},
}


@pytest.mark.parametrize(
    ("edited", "found", "expected"),
    [
        pytest.param(
            service(gateway="gone"),
            required(gateways=[]),
            condition("Routed", False, "GatewayNotFound", "InferenceGateway 'gone' not found"),
            id="a gateway that does not exist",
        ),
        pytest.param(
            service(),
            required(gateways=[{"metadata": {"name": "fleet"}, "spec": {"clusterRef": 1}}]),
            None,
            id="a gateway that does not read",
        ),
        pytest.param(
            service(),
            required(gateways=[{**required()["inferencegateway"][0], "status": {}}]),
            condition(
                "Routed",
                None,
                "GatewayNotReady",
                "InferenceGateway fleet has not composed its Gateway yet",
            ),
            id="a gateway not ready yet",
        ),
        pytest.param(
            service([{"external": {"url": "https://api.example-saas.com/openai/v1"}, "weight": 1}]),
            required(),
            None,
            id="an external URL with a path a gateway cannot forward to",
        ),
        pytest.param(
            service(hostname="chat.elsewhere.com"),
            required(),
            condition(
                "Valid",
                False,
                "HostnameNotAllowed",
                "spec.hostname: 'chat.elsewhere.com' is not a subdomain of InferenceGateway "
                "fleet's hostname 'models.example.com'",
            ),
            id="a hostname outside the gateway's",
        ),
        pytest.param(
            service(hostname="taken.models.example.com"),
            required(services=[TAKEN, service()]),
            condition(
                "Valid",
                False,
                "HostnameConflict",
                "spec.hostname: 'taken.models.example.com' is already served by a ModelService "
                "in another namespace on InferenceGateway fleet",
            ),
            id="a hostname another ModelService's route holds",
        ),
    ],
)
def test_nothing_routed_is_dropped_by_a_bad_edit_or_a_missing_dependency(
    edited: dict[str, Any], found: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    req = request({**edited, "status": PUBLISHED}, observed=RUNNING, required=found)
    got = as_dict(run(FunctionRunner(), req))
    kept = got["desired"]["resources"]
    assert sorted(kept) == sorted(RUNNING)
    for key, value in kept.items():
        assert value["ready"] == "READY_TRUE"
        assert value["resource"]["spec"] == RUNNING[key]["spec"]
    assert got["desired"]["composite"]["resource"]["status"] == PUBLISHED
    conditions = {c["type"]: c for c in got["conditions"]}
    if expected is not None:
        assert conditions[expected["type"]] == expected
    assert any(c["status"] != "STATUS_CONDITION_TRUE" for c in conditions.values())
    assert "ready" not in got["desired"]["composite"]


def test_the_oldest_service_keeps_a_hostname() -> None:
    newer = service(name="newer", created="2027-01-01T00:00:00Z", namespace="other-team")
    got = as_dict(run(FunctionRunner(), request(service(), required=required(services=[newer]))))
    assert {c["type"]: c["status"] for c in got["conditions"]}["Valid"] == "STATUS_CONDITION_TRUE"


def test_until_what_it_asked_for_is_fetched_it_answers_its_requirements_only() -> None:
    """Never kept by Crossplane's fetch loop (design/required-resources.md)."""
    got = as_dict(run(FunctionRunner(), request(service(), observed=RUNNING)))
    # The hub cluster is asked for once the gateway says which it is.
    resources = {k: v for k, v in REQUIREMENTS["resources"].items() if k != "hubcluster"}
    assert got == requirements_only(resources)


@pytest.mark.parametrize(
    ("hub", "reason", "message"),
    [
        pytest.param(
            [],
            "ClusterNotFound",
            "InferenceCluster 'serve-us-east' (the hub of InferenceGateway fleet) not found",
            id="the hub cluster is gone",
        ),
        pytest.param(
            [hub_cluster({"namespace": "{{ .Nope }}"})],
            "InvalidSpec",
            "InferenceCluster 'serve-us-east' (the hub of InferenceGateway fleet) cannot place "
            "the service",
            id="the hub's tenancy cannot name the namespace",
        ),
    ],
)
def test_a_hub_cluster_that_cannot_place_the_service_keeps_the_route(
    hub: list[dict[str, Any]], reason: str, message: str
) -> None:
    req = request({**service(), "status": PUBLISHED}, observed=RUNNING, required=required(hub=hub))
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == sorted(RUNNING)
    (routed,) = [c for c in got["conditions"] if c["type"] == "Routed"]
    assert (routed["status"], routed["reason"]) == ("STATUS_CONDITION_FALSE", reason)
    assert routed["message"].startswith(message)


def test_the_hubs_tenancy_names_and_labels_the_namespace() -> None:
    tenancy = {
        "namespace": "team-{{ .Namespace }}",
        "labels": {"pod-security.kubernetes.io/enforce": "baseline"},
    }
    got = as_dict(
        run(FunctionRunner(), request(service(), required=required(hub=[hub_cluster(tenancy)])))
    )
    resources = got["desired"]["resources"]
    namespace = resources["namespace"]["resource"]["spec"]["forProvider"]["manifest"]
    assert namespace["metadata"] == {
        "name": "team-chat-team",
        "labels": {
            "app.kubernetes.io/managed-by": "modelplane",
            "modelplane.ai/namespace": "chat-team",
            "pod-security.kubernetes.io/enforce": "baseline",
        },
    }
    route = resources["route"]["resource"]["spec"]["forProvider"]["manifest"]
    assert route["metadata"]["namespace"] == "team-chat-team"
