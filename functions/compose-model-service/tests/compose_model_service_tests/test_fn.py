"""compose-model-service: whole responses, and what each kind of input does to them."""

from typing import Any

from compose_model_service.fn import FunctionRunner

from modelplane.core import naming
from modelplane_dev.testing import as_dict, run, run_over_grpc

from .objects import (
    EXTERNAL,
    EXTERNAL_HOST,
    GW_EAST,
    GW_WEST,
    H100_EAST,
    H100_WEST,
    L4_EAST,
    REQUIREMENTS,
    TENANT,
    TLS_POLICY_KEY,
    condition,
    external_name,
    replica_ref,
    request,
    required,
    service,
    tls_policy,
    wrapped,
)


def object_name(key: str) -> str:
    return naming.hashed_name(f"chat-{key}", "ModelService", "chat", key)


# Each of a parent's Accepted and ResolvedRefs must be True, and not for an older spec.
CURRENT = (
    "(!has(c.observedGeneration) || !has(object.metadata) || "
    "!has(object.metadata.generation) || c.observedGeneration >= object.metadata.generation)"
)
ROUTE_READINESS = {
    "policy": "DeriveFromCelQuery",
    "celQuery": "has(object.status) && has(object.status.parents) && "
    "size(object.status.parents) > 0 && object.status.parents.all(p, has(p.conditions) && "
    f"p.conditions.exists(c, c.type == 'Accepted' && c.status == 'True' && {CURRENT}) && "
    f"p.conditions.exists(c, c.type == 'ResolvedRefs' && c.status == 'True' && {CURRENT}))",
}
NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {
        "name": TENANT,
        "labels": {
            "app.kubernetes.io/managed-by": "modelplane",
            "modelplane.ai/namespace": "chat-team",
            # The hub's tenancy sets no labels: the default level, as on workload clusters.
            "pod-security.kubernetes.io/enforce": "baseline",
        },
    },
}
EXTERNAL_SERVICE = "chat-external-5f3ff7a7"


def route(backends: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {
            "name": "chat",
            "namespace": TENANT,
            "labels": {"app.kubernetes.io/managed-by": "modelplane"},
        },
        "spec": {
            "parentRefs": [
                {
                    "group": "gateway.networking.k8s.io",
                    "kind": "Gateway",
                    "name": "modelplane-entry-fleet",
                    "namespace": "modelplane-system",
                }
            ],
            "hostnames": ["chat.models.example.com"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": backends,
                    "timeouts": {"request": "0s", "backendRequest": "0s"},
                }
            ],
        },
    }


def external_ref(weight: int) -> dict[str, Any]:
    return {
        "filters": [{"type": "URLRewrite", "urlRewrite": {"hostname": "api.example-saas.com"}}],
        "group": "",
        "kind": "Service",
        "name": EXTERNAL_SERVICE,
        "port": 443,
        "weight": weight,
    }


def backend_status(deployment: str, replica: str, cluster: str, host: str, weight: int) -> Any:
    return {
        "deployment": deployment,
        "replica": replica,
        "cluster": cluster,
        "url": f"http://{host}/{TENANT}/{replica}",
        "weight": weight,
    }


STEADY_ROUTE = route(
    [
        replica_ref("chat-qwen-h100-a", f"/{TENANT}/qwen-h100-a", 3000),
        replica_ref("chat-qwen-h100-b", f"/{TENANT}/qwen-h100-b", 3000),
        replica_ref("chat-qwen-l4-a", f"/{TENANT}/qwen-l4-a", 3000),
        external_ref(1000),
    ]
)
STEADY: dict[str, Any] = {
    "meta": {"tag": "test", "ttl": "60s"},
    "desired": {
        "composite": {
            "resource": {
                "status": {
                    "address": "http://chat.models.example.com",
                    "gatewayName": "fleet",
                    "endpoints": [
                        backend_status("qwen-h100", "qwen-h100-a", "serve-us-east", GW_EAST, 3000),
                        backend_status("qwen-h100", "qwen-h100-b", "serve-eu-west", GW_WEST, 3000),
                        backend_status("qwen-l4", "qwen-l4-a", "serve-us-east", GW_EAST, 3000),
                        {"external": True, "url": EXTERNAL, "weight": 1000},
                    ],
                }
            }
        },
        "resources": {
            "backend-external-5f3ff7a7": wrapped(
                object_name("backend-external-5f3ff7a7"),
                external_name(EXTERNAL_SERVICE, "api.example-saas.com", 443),
            ),
            TLS_POLICY_KEY: {
                **wrapped(object_name(TLS_POLICY_KEY), tls_policy(EXTERNAL_SERVICE, EXTERNAL_HOST)),
                "ready": "READY_TRUE",
            },
            "backend-qwen-h100-a": wrapped(
                object_name("backend-qwen-h100-a"), external_name("chat-qwen-h100-a", GW_EAST, 80)
            ),
            "backend-qwen-h100-b": wrapped(
                object_name("backend-qwen-h100-b"), external_name("chat-qwen-h100-b", GW_WEST, 80)
            ),
            "backend-qwen-l4-a": wrapped(
                object_name("backend-qwen-l4-a"), external_name("chat-qwen-l4-a", GW_EAST, 80)
            ),
            "namespace": wrapped(object_name("namespace"), NAMESPACE, shared=True),
            "route": wrapped(object_name("route"), STEADY_ROUTE, ROUTE_READINESS),
        },
    },
    "requirements": REQUIREMENTS,
    "context": {},
    "conditions": [
        condition("Valid", True, "Valid", "routed on InferenceGateway fleet"),
        condition(
            "EndpointsResolved",
            True,
            "EndpointsFound",
            "3 serving replicas and 1 external endpoints resolved",
        ),
        condition(
            "Routed",
            None,
            "RoutePending",
            "the route is not accepted by its Gateway yet; 4 backends: qwen-h100-a 30%, "
            f"qwen-h100-b 30%, qwen-l4-a 30%, {EXTERNAL} 10%",
        ),
    ],
}


def test_the_whole_response_of_a_service_with_every_kind_of_backend() -> None:
    req = request(service(), required=required())
    assert as_dict(run(FunctionRunner(), req)) == STEADY
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == STEADY


def _status(endpoints: list[dict[str, Any]] | None = None, **found: Any) -> dict[str, Any]:
    req = request(service(), required=required(endpoints=endpoints, **found))
    return as_dict(run(FunctionRunner(), req))


def _weights(got: dict[str, Any]) -> dict[str, int]:
    return {
        e.get("replica", e["url"]): e["weight"]
        for e in got["desired"]["composite"]["resource"]["status"]["endpoints"]
    }


def test_a_replica_that_stops_serving_leaves_the_route_and_its_share_is_shared() -> None:
    # qwen-h100-b stopped serving: its ModelEndpoint is gone. qwen-h100's 60 now all
    # goes to qwen-h100-a.
    got = _status([H100_EAST, L4_EAST])
    assert _weights(got) == {"qwen-h100-a": 6000, "qwen-l4-a": 3000, EXTERNAL: 1000}
    assert "backend-qwen-h100-b" not in got["desired"]["resources"]
    backends = got["desired"]["resources"]["route"]["resource"]["spec"]["forProvider"]["manifest"][
        "spec"
    ]["rules"][0]["backendRefs"]
    assert [b["name"] for b in backends] == ["chat-qwen-h100-a", "chat-qwen-l4-a", EXTERNAL_SERVICE]


def test_a_deployment_with_nothing_serving_gives_its_share_to_the_others() -> None:
    # qwen-l4 has no serving replica: 60 and 10 split everything, the external keeps 10.
    got = _status([H100_EAST, H100_WEST])
    assert _weights(got) == {"qwen-h100-a": 4286, "qwen-h100-b": 4286, EXTERNAL: 1428}
    assert sum(_weights(got).values()) == 10000


def test_with_nothing_serving_the_external_endpoint_takes_everything() -> None:
    got = _status([])
    assert _weights(got) == {EXTERNAL: 10000}
    routed = {c["type"]: c for c in got["conditions"]}["Routed"]
    assert routed["reason"] == "RoutePending"


def test_with_no_backend_at_all_the_route_is_empty_and_says_so() -> None:
    req = request(
        service([{"deployment": {"name": "qwen-h100"}}]),
        required=required(endpoints=[]),
    )
    got = as_dict(run(FunctionRunner(), req))
    routed = {c["type"]: c for c in got["conditions"]}["Routed"]
    assert (routed["status"], routed["reason"]) == ("STATUS_CONDITION_FALSE", "NoServingBackends")
    assert got["desired"]["composite"]["resource"]["status"]["endpoints"] == []


def test_a_missing_deployment_is_named_and_the_rest_are_routed() -> None:
    got = _status(
        deployments={"modeldeployment-qwen-h100": [], "modeldeployment-qwen-l4": []},
    )
    resolved = {c["type"]: c for c in got["conditions"]}["EndpointsResolved"]
    assert resolved == condition(
        "EndpointsResolved",
        False,
        "DeploymentNotFound",
        "spec.endpoints[0].deployment.name: ModelDeployment 'qwen-h100' not found in namespace "
        "chat-team; routing to the other endpoints; spec.endpoints[1].deployment.name: "
        "ModelDeployment 'qwen-l4' not found in namespace chat-team; routing to the other "
        "endpoints",
    )
    assert _weights(got) == {EXTERNAL: 10000}
    assert got["results"][0]["reason"] == "DeploymentNotFound"


def test_an_endpoint_its_deployment_did_not_compose_is_never_routed() -> None:
    forged = {**H100_WEST, "metadata": {**H100_WEST["metadata"], "ownerReferences": []}}
    stale = {
        **H100_WEST,
        "metadata": {
            **H100_WEST["metadata"],
            "ownerReferences": [{**H100_WEST["metadata"]["ownerReferences"][0], "uid": "old"}],
        },
    }
    for bad in (forged, stale):
        got = _status([H100_EAST, bad, L4_EAST])
        assert "qwen-h100-b" not in _weights(got)


def test_a_replica_the_hub_cannot_reach_is_a_warning_and_is_not_routed() -> None:
    # A replica on a cluster without a gateway is reached at its Service, inside
    # its own cluster only.
    inside = {
        **H100_WEST,
        "spec": {
            **H100_WEST["spec"],
            "url": f"http://qwen-h100-b.{TENANT}.svc.cluster.local:8000",
        },
    }
    got = _status([H100_EAST, inside, L4_EAST])
    assert "qwen-h100-b" not in _weights(got)
    (warned,) = [r for r in got["results"] if r["reason"] == "EndpointUnreachable"]
    assert "spec.endpoints[0].deployment: replica qwen-h100-b" in warned["message"]
    assert "declare spec.gateway on InferenceCluster serve-eu-west" in warned["message"]
    # On the hub cluster itself, its Service is a backend as it is.
    local = {**inside, "spec": {**inside["spec"], "clusterName": "serve-us-east"}}
    got = _status([H100_EAST, local, L4_EAST])
    refs = got["desired"]["resources"]["route"]["resource"]["spec"]["forProvider"]["manifest"]
    names = [b["name"] for b in refs["spec"]["rules"][0]["backendRefs"]]
    assert "qwen-h100-b" in names
    assert "backend-qwen-h100-b" not in got["desired"]["resources"]


def test_a_gateway_that_reports_an_ip_is_reached_through_an_endpoint_slice() -> None:
    by_ip = {**H100_WEST, "spec": {**H100_WEST["spec"], "url": f"http://203.0.113.9/{TENANT}/x"}}
    got = _status([by_ip])
    resources = got["desired"]["resources"]
    service_manifest = resources["backend-qwen-h100-b"]["resource"]["spec"]["forProvider"][
        "manifest"
    ]
    slice_manifest = resources["backend-qwen-h100-b-endpoints"]["resource"]["spec"]["forProvider"][
        "manifest"
    ]
    assert service_manifest["spec"] == {
        "type": "ClusterIP",
        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}],
    }
    assert slice_manifest["addressType"] == "IPv4"
    assert slice_manifest["endpoints"] == [{"addresses": ["203.0.113.9"]}]
    assert slice_manifest["metadata"]["labels"]["kubernetes.io/service-name"] == "chat-qwen-h100-b"


def test_the_deployments_serving_different_names_is_a_warning() -> None:
    got = _status(
        deployments={
            "modeldeployment-qwen-h100": [
                {"metadata": {"name": "qwen-h100"}, "spec": {"model": {}}}
            ],
            "modeldeployment-qwen-l4": [{"metadata": {"name": "qwen-l4"}, "spec": {"model": {}}}],
        },
    )
    (warned,) = [r for r in got["results"] if r["reason"] == "ModelNamesDiffer"]
    assert "(qwen-h100, qwen-l4)" in warned["message"]


def test_without_a_hostname_the_address_is_a_path_on_the_gateway() -> None:
    req = request(service(hostname=None), required=required())
    got = as_dict(run(FunctionRunner(), req))
    assert got["desired"]["composite"]["resource"]["status"]["address"] == (
        "http://models.example.com/chat-team/chat"
    )
    rule = got["desired"]["resources"]["route"]["resource"]["spec"]["forProvider"]["manifest"][
        "spec"
    ]["rules"][0]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/chat-team/chat"}}]
    assert rule["filters"] == [
        {
            "type": "URLRewrite",
            "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
        }
    ]
    assert "modelservices" not in got["requirements"]["resources"]


def test_a_backend_the_hub_gateway_refuses_keeps_the_route_pending_and_says_why() -> None:
    """Accepted alone is not routed: a Gateway that cannot resolve a backend (Envoy
    Gateway with its Backend API off) accepts the route and refuses the backend."""
    refused = {
        "type": "ResolvedRefs",
        "status": "False",
        "reason": "InvalidKind",
        "message": "Kind is invalid, only Service, MCS ServiceImport and Envoy Gateway "
        "Backend are supported",
    }
    read = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "chat", "namespace": TENANT},
        "status": {
            "parents": [
                {
                    "parentRef": {"name": "modelplane-entry-fleet"},
                    "controllerName": "gateway.envoyproxy.io/gatewayclass-controller",
                    "conditions": [
                        {"type": "Accepted", "status": "True", "reason": "Accepted"},
                        refused,
                    ],
                }
            ]
        },
    }
    observed = {
        "route": {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "Object",
            "metadata": {"name": object_name("route")},
            "status": {
                "atProvider": {"manifest": read},
                "conditions": [{"type": "Ready", "status": "False", "reason": "Unavailable"}],
            },
        }
    }
    req = request(service(), observed=observed, required=required())
    got = as_dict(run(FunctionRunner(), req))
    (routed,) = [c for c in got["conditions"] if c["type"] == "Routed"]
    assert (routed["status"], routed["reason"]) == ("STATUS_CONDITION_UNKNOWN", "RoutePending")
    assert routed["message"].startswith(
        "HTTPRoute chat has backends Gateway modelplane-entry-fleet does not resolve: Kind "
        "is invalid, only Service, MCS ServiceImport and Envoy Gateway Backend are "
        "supported; 4 backends: "
    )
