"""The workload kind registry: each kind says its facts once, and they agree."""

from typing import Any

import celpy
import pytest
from celpy.adapter import json_to_cel

from modelplane.core import kinds
from modelplane.core.kinds import (
    DEPLOYMENT,
    GATEWAY,
    LEADER_WORKER_SET,
    LLM_INFERENCE_SERVICE,
    WORKLOAD_KINDS,
    WorkloadKind,
)
from modelplane.core.kinds.gateway import address

SPECS: dict[str, dict[str, Any]] = {
    "Deployment": {"replicas": 3, "template": {"spec": {"containers": []}}},
    "LeaderWorkerSet": {
        "replicas": 2,
        "leaderWorkerTemplate": {"size": 4, "leaderTemplate": {}, "workerTemplate": {}},
    },
    "LLMInferenceService": {
        "replicas": 2,
        "parallelism": {"tensor": 8, "pipeline": 2},
        "template": {},
        "worker": {},
        "prefill": {"replicas": 3, "template": {}},
    },
    "Service": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 8000}]},
    "InferencePool": {"selector": {"matchLabels": {"app": "x"}}, "targetPorts": [{"number": 8000}]},
    "HTTPRoute": {"parentRefs": [{"name": "gw", "namespace": "infra"}], "rules": []},
    "Gateway": {"gatewayClassName": "eg", "listeners": [{"name": "http", "port": 80}]},
}
PODS = {"Deployment": 3, "LeaderWorkerSet": 8, "LLMInferenceService": 2 * 2 + 3}
# Kinds whose controller reports when they serve; the others serve once created.
REPORTING = [k for k in WORKLOAD_KINDS if k.readiness()["policy"] == "DeriveFromCelQuery"]
CREATED = [k for k in WORKLOAD_KINDS if k not in REPORTING]


def manifest(kind: WorkloadKind, name: str = "w") -> dict[str, Any]:
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name},
        "spec": SPECS[kind.kind],
    }


def _cel(query: str, obj: dict[str, Any]) -> bool:
    env = celpy.Environment()
    return bool(env.program(env.compile(query)).evaluate({"object": json_to_cel(obj)}))


@pytest.mark.parametrize("kind", REPORTING, ids=repr)
def test_a_healthy_object_serves_by_the_readiness_query_and_the_status_reader(
    kind: WorkloadKind,
) -> None:
    """What the render simulation shows is exactly what the kind counts as serving."""
    obj = {**manifest(kind), "status": kind.healthy_status(SPECS[kind.kind])}
    assert kind.serving(obj) == (True, f"{kind.kind} w is {kind.serving_condition}")
    assert _cel(kind.readiness()["celQuery"], obj)
    assert not _cel(kind.readiness()["celQuery"], manifest(kind))
    assert kind.serving(manifest(kind))[0] is False


@pytest.mark.parametrize("kind", CREATED, ids=repr)
def test_a_kind_without_a_serving_report_serves_once_created(kind: WorkloadKind) -> None:
    assert kind.readiness() == {"policy": "SuccessfulCreate"}
    assert kind.serving(manifest(kind)) == (True, f"{kind.kind} w is {kind.serving_condition}")
    assert kind.serving(None)[0] is False
    assert kinds.pods(manifest(kind)) == 0


def test_a_route_serves_only_once_every_gateway_accepted_it() -> None:
    route = kinds.HTTP_ROUTE
    spec = {"parentRefs": [{"name": "a"}, {"name": "b"}]}
    status = route.healthy_status(spec)
    healthy = {**manifest(route), "spec": spec, "status": status}
    assert route.serving(healthy)[0] and _cel(route.readiness()["celQuery"], healthy)
    status["parents"][1]["conditions"][0] = {
        "type": "Accepted",
        "status": "False",
        "reason": "NotAllowedByListeners",
    }
    assert route.serving(healthy) == (
        False,
        "HTTPRoute w is not accepted by Gateway b: NotAllowedByListeners",
    )
    assert not _cel(route.readiness()["celQuery"], healthy)


def test_a_route_whose_backend_a_gateway_refuses_does_not_serve() -> None:
    """Accepted says the route is attached, not that it reaches anything: Envoy Gateway
    v1.8.1 without Envoy AI Gateway accepts a route to an InferencePool and refuses the
    backend, so requests get no backend."""
    route = kinds.HTTP_ROUTE
    spec = {"parentRefs": [{"name": "a"}]}
    status = route.healthy_status(spec)
    refused = {**manifest(route), "spec": spec, "status": status}
    status["parents"][0]["conditions"][1] = {
        "type": "ResolvedRefs",
        "status": "False",
        "reason": "InvalidKind",
        "message": "Group is invalid, only the core API group (specified by omitting the "
        "group field or setting it to an empty string), multicluster.x-k8s.io and "
        "gateway.envoyproxy.io are supported",
    }
    assert route.serving(refused) == (
        False,
        "HTTPRoute w has backends Gateway a does not resolve: Group is invalid, only the "
        "core API group (specified by omitting the group field or setting it to an empty "
        "string), multicluster.x-k8s.io and gateway.envoyproxy.io are supported",
    )
    assert not _cel(route.readiness()["celQuery"], refused)
    # Resolved for an older spec of the route: says nothing about this one.
    status["parents"][0]["conditions"][1] = {
        "type": "ResolvedRefs",
        "status": "True",
        "reason": "ResolvedRefs",
        "observedGeneration": 1,
    }
    older = {**refused, "metadata": {"name": "w", "generation": 2}}
    assert route.serving(older) == (
        False,
        "HTTPRoute w is ResolvedRefs at Gateway a for an older spec (generation 1, not 2)",
    )
    assert not _cel(route.readiness()["celQuery"], older)
    assert route.serving(refused)[0] and _cel(route.readiness()["celQuery"], refused)
    # Not reported yet: not resolved either.
    del status["parents"][0]["conditions"][1]
    assert route.serving(refused) == (
        False,
        "HTTPRoute w has backends Gateway a does not resolve: pending",
    )
    assert not _cel(route.readiness()["celQuery"], refused)


def test_a_simulated_gateway_has_an_address_of_its_own_per_cluster() -> None:
    gateway = {**manifest(GATEWAY), "metadata": {"name": "gw", "namespace": "infra"}}
    east = GATEWAY.healthy_status_on(gateway, "east")
    west = GATEWAY.healthy_status_on(gateway, "west")
    assert address({"status": east}) == "gw.infra.east.example"
    assert address({"status": west}) == "gw.infra.west.example"
    assert address({"status": GATEWAY.healthy_status(gateway["spec"])}) is None
    assert address(None) is None


@pytest.mark.parametrize(
    ("status", "want"),
    [
        ({"addresses": [{"type": "IPAddress", "value": "203.0.113.7"}]}, "203.0.113.7"),
        ({"addresses": [{"type": "Hostname", "value": ""}, {"value": "gw.example"}]}, "gw.example"),
        ({"addresses": []}, None),
        ({"addresses": "203.0.113.7"}, None),
        (
            # A condition that does not read does not hide the address beside it.
            {"conditions": [{"type": 7}], "addresses": [{"value": "203.0.113.7"}]},
            "203.0.113.7",
        ),
        ("not a status", None),
    ],
    ids=["ip", "first non-empty", "none", "unreadable addresses", "bad condition", "no status"],
)
def test_a_gateway_address_is_read_through_its_model(status: Any, want: str | None) -> None:
    assert address({"kind": "Gateway", "status": status}) == want


@pytest.mark.parametrize("kind", WORKLOAD_KINDS, ids=repr)
def test_lookup_by_kind_and_group(kind: WorkloadKind) -> None:
    assert kinds.workload_kind(manifest(kind)) is kind
    assert kinds.named(kind.kind) is kind
    other_version = {**manifest(kind), "apiVersion": f"{kind.group}/v9" if kind.group else "v9"}
    assert kinds.workload_kind(other_version) is kind
    other_group = {**manifest(kind), "apiVersion": "example.com/v1"}
    assert kinds.workload_kind(other_group) is None
    assert kinds.pods(other_group) == 0


def test_unknown_kinds_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'StatefulSet' is not a workload kind"):
        kinds.named("StatefulSet")


@pytest.mark.parametrize("kind", [k for k in WORKLOAD_KINDS if k.kind in PODS], ids=repr)
def test_pod_count_is_the_sum_of_the_pod_sets(kind: WorkloadKind) -> None:
    assert kinds.pods(manifest(kind)) == PODS[kind.kind]


def test_pod_sets_say_who_owns_the_pods_and_how_they_gang() -> None:
    (deployment,) = kinds.pod_sets(manifest(DEPLOYMENT))
    assert (deployment.owner, deployment.size, deployment.replicas) == (DEPLOYMENT, 1, 3)
    assert not deployment.multi_pod and deployment.lws_name is None

    (lws,) = kinds.pod_sets(manifest(LEADER_WORKER_SET, "big"))
    assert (lws.owner, lws.size, lws.replicas, lws.lws_name) == (LEADER_WORKER_SET, 4, 2, "big")
    assert lws.multi_pod and not lws.leader_ready
    assert [s.path for s in lws.sites] == [
        "spec.leaderWorkerTemplate.leaderTemplate.metadata",
        "spec.leaderWorkerTemplate.workerTemplate.metadata",
    ]

    main, prefill = kinds.pod_sets(manifest(LLM_INFERENCE_SERVICE, "svc"))
    assert (main.part, main.owner, main.size, main.lws_name) == (
        "",
        LEADER_WORKER_SET,
        2,
        "svc-kserve-mn",
    )
    assert (prefill.part, prefill.owner, prefill.size, prefill.replicas) == (
        "prefill",
        DEPLOYMENT,
        1,
        3,
    )


def test_a_leader_ready_lws_says_so() -> None:
    obj = manifest(LEADER_WORKER_SET)
    obj["spec"] = {**obj["spec"], "startupPolicy": "LeaderReady"}
    (pod_set,) = kinds.pod_sets(obj)
    assert pod_set.leader_ready


@pytest.mark.parametrize(
    ("spec", "pods"),
    [
        ({}, 1),
        ({"replicas": "three"}, 1),
        ({"replicas": True}, 1),
        ({"replicas": 0}, 0),
        ({"replicas": 2, "leaderWorkerTemplate": ["not", "a", "map"]}, 2),
    ],
)
def test_malformed_fields_count_as_their_defaults(spec: dict[str, Any], pods: int) -> None:
    obj = {**manifest(LEADER_WORKER_SET), "spec": spec}
    assert kinds.pods(obj) == pods


def test_fill_creates_absent_template_metadata_only_when_asked() -> None:
    obj = {**manifest(DEPLOYMENT), "spec": {"template": {}}}
    (site,) = kinds.pod_sites(obj)
    site.metadata["labels"] = {"a": "b"}
    assert obj["spec"]["template"] == {}
    (site,) = kinds.pod_sites(obj, fill=True)
    site.metadata["labels"] = {"a": "b"}
    assert obj["spec"]["template"]["metadata"] == {"labels": {"a": "b"}}


AVAILABLE = {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}


@pytest.mark.parametrize(
    ("status", "verdict"),
    [
        # Read through the generated model: a count as a protobuf Struct carries it
        # (a double) reads as the integer the API server validated.
        (
            {"availableReplicas": 3.0, "updatedReplicas": 3.0, "conditions": [AVAILABLE]},
            (True, "Deployment w is Available"),
        ),
        (
            {"availableReplicas": 2, "updatedReplicas": 3, "conditions": [AVAILABLE]},
            (False, "Deployment w is Available with availableReplicas 2 of 3"),
        ),
        # The API server omits a count that is 0.
        (
            {"availableReplicas": 3, "conditions": [AVAILABLE]},
            (False, "Deployment w is Available with updatedReplicas 0 of 3"),
        ),
        # A count that is no integer reads as absent (0), as the readiness query
        # reads a missing one; it does not hide the condition beside it.
        (
            {"availableReplicas": "3", "updatedReplicas": 3, "conditions": [AVAILABLE]},
            (False, "Deployment w is Available with availableReplicas 0 of 3"),
        ),
        (
            {
                "availableReplicas": 3,
                "updatedReplicas": 3,
                "observedGeneration": 1.5,
                "conditions": [AVAILABLE],
            },
            (True, "Deployment w is Available"),
        ),
        (
            {"availableReplicas": 3, "updatedReplicas": 3, "conditions": ["x", AVAILABLE]},
            (True, "Deployment w is Available"),
        ),
    ],
)
def test_an_observed_workload_is_read_through_its_model(
    status: dict[str, Any], verdict: tuple[bool, str]
) -> None:
    assert DEPLOYMENT.serving({**manifest(DEPLOYMENT), "status": status}) == verdict


def test_the_replicas_asked_for_are_read_back_too() -> None:
    obj = {
        **manifest(LEADER_WORKER_SET),
        "spec": {"replicas": 1.0},
        "status": {"readyReplicas": 1, "updatedReplicas": 1, "conditions": [AVAILABLE]},
    }
    assert LEADER_WORKER_SET.serving(obj) == (True, "LeaderWorkerSet w is Available")
    obj["spec"] = {"replicas": 4}
    assert LEADER_WORKER_SET.serving(obj)[1].endswith("readyReplicas 1 of 4")


def test_a_field_a_kind_does_not_count_never_hides_its_condition() -> None:
    """An LLMInferenceService serves on Ready alone, as its readiness query says: an
    odd replica count or generation beside it changes nothing."""
    kind = kinds.named("LLMInferenceService")
    ready = {"type": "Ready", "status": "True"}
    obj = {
        **manifest(kind),
        "spec": {"replicas": "2"},
        "status": {"observedGeneration": 1.5, "conditions": [ready]},
    }
    assert kind.serving(obj) == (True, "LLMInferenceService w is Ready")
