"""The objects and expected responses compose-model-service's tests share."""

from collections.abc import Mapping, Sequence
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.naming import digest
from modelplane_dev import testing

Obj = dict[str, Any]
API = "modelplane.ai/v1alpha1"
NS = "chat-team"
TENANT = "mp-chat-team"
HUB = "serve-us-east"
GW_EAST = "gw.serve-us-east.example"
GW_WEST = "gw.serve-eu-west.example"
UIDS = {"qwen-h100": "11111111-aaaa", "qwen-l4": "22222222-bbbb"}
PROVIDER = {"kind": "ClusterProviderConfig", "name": HUB}
EXTERNAL = "https://api.example-saas.com/v1"
EXTERNAL_HOST = "api.example-saas.com"
# The external endpoint's BackendTLSPolicy, as the hub's Object reports it created:
# an https backend gets traffic only once this is so.
TLS_POLICY_KEY = "backend-external-5f3ff7a7-tls"
CREATED = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}}


def request(
    composite: Obj,
    *,
    observed: Mapping[str, Obj] | None = None,
    required: Mapping[str, Sequence[Obj]] | None = None,
) -> fnv1.RunFunctionRequest:
    """A request on a hub where the external endpoint's BackendTLSPolicy exists (the
    steady state) when `observed` is not given."""
    found = dict(observed) if observed is not None else {TLS_POLICY_KEY: CREATED}
    return testing.request(composite, observed=found, required=required)


def service(
    endpoints: list[Obj] | None = None,
    hostname: str | None = "chat.models.example.com",
    name: str = "chat",
    created: str = "2026-01-01T00:00:00Z",
    namespace: str = NS,
    gateway: str = "fleet",
) -> Obj:
    spec: Obj = {
        "gatewayRef": {"name": gateway},
        "endpoints": endpoints
        if endpoints is not None
        else [
            {"deployment": {"name": "qwen-h100"}, "weight": 60},
            {"deployment": {"name": "qwen-l4"}, "weight": 30},
            {"external": {"url": EXTERNAL}, "weight": 10},
        ],
    }
    if hostname is not None:
        spec["hostname"] = hostname
    return {
        "apiVersion": API,
        "kind": "ModelService",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
        "spec": spec,
    }


def gateway(hostname: str | None = "models.example.com", ready: bool = True) -> Obj:
    spec: Obj = {"clusterRef": {"name": HUB}, "gatewayClassName": "eg"}
    if hostname is not None:
        spec["hostname"] = hostname
    obj: Obj = {"apiVersion": API, "kind": "InferenceGateway", "metadata": {"name": "fleet"}}
    obj["spec"] = spec
    if ready:
        obj["status"] = {
            "address": f"http://{hostname or 'entry.serve-us-east.example'}",
            "gatewayRef": {"name": "modelplane-entry-fleet", "namespace": "modelplane-system"},
            "providerConfigRef": PROVIDER,
        }
    return obj


def deployment(name: str, model: str | None = "qwen2.5-7b-instruct") -> Obj:
    spec: Obj = {"replicas": 1}
    if model is not None:
        spec["model"] = {"name": model}
    return {
        "apiVersion": API,
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": NS, "uid": UIDS.get(name, "33333333-cccc")},
        "spec": spec,
    }


def endpoint(deployment: str, replica: str, cluster: str, url: str, uid: str | None = None) -> Obj:
    return {
        "apiVersion": API,
        "kind": "ModelEndpoint",
        "metadata": {
            "name": replica,
            "namespace": NS,
            "ownerReferences": [
                {
                    "apiVersion": API,
                    "kind": "ModelDeployment",
                    "name": deployment,
                    "uid": uid or UIDS[deployment],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "deploymentName": deployment,
            "replicaName": replica,
            "clusterName": cluster,
            "url": url,
        },
    }


H100_EAST = endpoint("qwen-h100", "qwen-h100-a", HUB, f"http://{GW_EAST}/{TENANT}/qwen-h100-a")
H100_WEST = endpoint(
    "qwen-h100", "qwen-h100-b", "serve-eu-west", f"http://{GW_WEST}/{TENANT}/qwen-h100-b"
)
L4_EAST = endpoint("qwen-l4", "qwen-l4-a", HUB, f"http://{GW_EAST}/{TENANT}/qwen-l4-a")
SERVING = [H100_EAST, H100_WEST, L4_EAST]
DEPLOYMENTS = {
    "modeldeployment-qwen-h100": [deployment("qwen-h100")],
    "modeldeployment-qwen-l4": [deployment("qwen-l4")],
}


def hub_cluster(tenancy: Obj | None = None) -> Obj:
    """The InferenceCluster the gateway is on: its tenancy names the service's namespace."""
    spec: Obj = {
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": "k", "namespace": "p"}},
        },
        "nodePools": [{"name": "l4", "className": "l4-1x", "nodeCount": 1}],
    }
    if tenancy is not None:
        spec["tenancy"] = tenancy
    return {"apiVersion": API, "kind": "InferenceCluster", "metadata": {"name": HUB}, "spec": spec}


def required(
    endpoints: list[Obj] | None = None,
    deployments: dict[str, list[Obj]] | None = None,
    gateways: list[Obj] | None = None,
    services: list[Obj] | None = None,
    hub: list[Obj] | None = None,
) -> dict[str, list[Obj]]:
    found: dict[str, list[Obj]] = {
        "inferencegateway": gateways if gateways is not None else [gateway()],
        "hubcluster": hub if hub is not None else [hub_cluster()],
        "modelendpoints": endpoints if endpoints is not None else SERVING,
        **(deployments if deployments is not None else DEPLOYMENTS),
    }
    found["modelservices"] = services if services is not None else [service()]
    return found


REQUIREMENTS: Obj = {
    "resources": {
        "inferencegateway": {"apiVersion": API, "kind": "InferenceGateway", "matchName": "fleet"},
        "hubcluster": {"apiVersion": API, "kind": "InferenceCluster", "matchName": HUB},
        "modeldeployment-qwen-h100": {
            "apiVersion": API,
            "kind": "ModelDeployment",
            "matchName": "qwen-h100",
            "namespace": NS,
        },
        "modeldeployment-qwen-l4": {
            "apiVersion": API,
            "kind": "ModelDeployment",
            "matchName": "qwen-l4",
            "namespace": NS,
        },
        "modelendpoints": {"apiVersion": API, "kind": "ModelEndpoint", "namespace": NS},
        "modelservices": {"apiVersion": API, "kind": "ModelService"},
    }
}


def condition(type_: str, status: bool | None, reason: str, message: str) -> Obj:
    word = {True: "TRUE", False: "FALSE", None: "UNKNOWN"}[status]
    found: Obj = {
        "type": type_,
        "status": f"STATUS_CONDITION_{word}",
        "reason": reason,
        "target": "TARGET_COMPOSITE",
    }
    if message:
        found["message"] = message
    return found


def event(reason: str, message: str) -> Obj:
    return {
        "severity": "SEVERITY_WARNING",
        "reason": reason,
        "message": message,
        "target": "TARGET_COMPOSITE",
    }


def wrapped(name: str, manifest: Obj, readiness: Obj | None = None, shared: bool = False) -> Obj:
    """A provider-kubernetes Object on the hub, as the function composes it."""
    spec: Obj = {
        "forProvider": {"manifest": manifest},
        "providerConfigRef": PROVIDER,
        "readiness": readiness or {"policy": "SuccessfulCreate"},
    }
    if shared:
        spec["managementPolicies"] = ["Observe", "Create", "Update", "LateInitialize"]
    if readiness is not None:
        spec["watch"] = True  # readiness read from the route's status: watched
    return {
        "resource": {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "Object",
            "metadata": {"name": name},
            "spec": spec,
        },
        "ready": "READY_FALSE",
    }


def external_name(name: str, host: str, port: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": TENANT,
            "labels": {"app.kubernetes.io/managed-by": "modelplane"},
        },
        "spec": {
            "type": "ExternalName",
            "externalName": host,
            "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        },
    }


def replica_ref(name: str, prefix: str, weight: int) -> Obj:
    return {
        "filters": [
            # The hostname only the replica's hub route lists (names.hub_hostname).
            {
                "type": "URLRewrite",
                "urlRewrite": {"hostname": f"{digest(prefix)}.hub.modelplane.internal"},
            },
            {
                "type": "RequestHeaderModifier",
                "requestHeaderModifier": {"set": [{"name": "x-modelplane-route", "value": prefix}]},
            },
        ],
        "group": "",
        "kind": "Service",
        "name": name,
        "port": 80,
        "weight": weight,
    }


def tls_policy(name: str, host: str) -> Obj:
    """TLS to an https ExternalName Service's host: SNI and verification of the host's
    name against the system CAs."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "BackendTLSPolicy",
        "metadata": {
            "name": name,
            "namespace": TENANT,
            "labels": {"app.kubernetes.io/managed-by": "modelplane"},
        },
        "spec": {
            "targetRefs": [{"group": "", "kind": "Service", "name": name}],
            "validation": {"hostname": host, "wellKnownCACertificates": "System"},
        },
    }


ENVOY_GATEWAY = "gateway.envoyproxy.io/gatewayclass-controller"


def envoy_backend(name: str, host: str, port: int, tls: bool = False) -> Obj:
    """An Envoy Gateway Backend for a DNS-named host, as a hub served by Envoy Gateway
    reaches it (Envoy Gateway routes to no ExternalName Service); `tls` for https."""
    spec: Obj = {"endpoints": [{"fqdn": {"hostname": host, "port": port}}]}
    if tls:
        spec["tls"] = {"sni": host, "wellKnownCACertificates": "System"}
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "Backend",
        "metadata": {
            "name": name,
            "namespace": TENANT,
            "labels": {"app.kubernetes.io/managed-by": "modelplane"},
        },
        "spec": spec,
    }
