"""compose-inference-gateway: whole-response tests, table-driven."""

from typing import Any

import pytest
from compose_inference_gateway.fn import FunctionRunner

from modelplane.core import naming
from modelplane_dev.testing import as_dict, request, requirements_only, run, run_over_grpc

Obj = dict[str, Any]
PROVIDER = {"kind": "ClusterProviderConfig", "name": "hub"}
GATEWAY_REF = {"name": "modelplane-entry-fleet", "namespace": "modelplane-system"}
REQUIREMENTS = {
    "resources": {
        "inferencecluster": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceCluster",
            "matchName": "hub",
        }
    }
}
GATEWAY_CLASS = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "GatewayClass",
    "metadata": {"name": "eg"},
}
ENVOY_GATEWAY = "gateway.envoyproxy.io/gatewayclass-controller"
PROGRAMMED_QUERY = (
    "has(object.status) && has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True')"
)


def gateway(hostname: str | None = "models.example.com", status: Obj | None = None) -> Obj:
    spec: Obj = {"clusterRef": {"name": "hub"}, "gatewayClassName": "eg"}
    if hostname:
        spec["hostname"] = hostname
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceGateway",
        "metadata": {"name": "fleet"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def cluster(connected: bool = True) -> Obj:
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "hub"},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": "k", "namespace": "p"}},
            },
            "nodePools": [{"name": "l4", "className": "l4-1x", "nodeCount": 1}],
        },
    }
    if connected:
        obj["status"] = {"providerConfigRef": PROVIDER}
    return obj


def object_name(key: str) -> str:
    return naming.hashed_name(f"fleet-{key}", "InferenceGateway", "fleet", key)


def listener(name: str, hostname: str | None) -> Obj:
    found: Obj = {"name": name, "protocol": "HTTP", "port": 80}
    if hostname:
        found["hostname"] = hostname
    found["allowedRoutes"] = {
        "kinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
        "namespaces": {
            "from": "Selector",
            "selector": {
                "matchExpressions": [{"key": "modelplane.ai/namespace", "operator": "Exists"}]
            },
        },
    }
    return found


def composed(ready: bool, hostname: str | None = "models.example.com") -> Obj:
    listeners = [listener("http", hostname)]
    if hostname:
        listeners.append(listener("http-subdomains", f"*.{hostname}"))
    state = "READY_TRUE" if ready else "READY_FALSE"
    return {
        "gateway": {
            "resource": {
                "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
                "kind": "Object",
                # Beside the hub cluster's own Objects, in its kubeconfig Secret's namespace.
                "metadata": {"name": object_name("gateway"), "namespace": "p"},
                "spec": {
                    "forProvider": {
                        "manifest": {
                            "apiVersion": "gateway.networking.k8s.io/v1",
                            "kind": "Gateway",
                            "metadata": {
                                "name": "modelplane-entry-fleet",
                                "namespace": "modelplane-system",
                                "labels": {"app.kubernetes.io/managed-by": "modelplane"},
                            },
                            "spec": {"gatewayClassName": "eg", "listeners": listeners},
                        }
                    },
                    "providerConfigRef": PROVIDER,
                    "readiness": {"policy": "DeriveFromCelQuery", "celQuery": PROGRAMMED_QUERY},
                    "watch": True,
                },
            },
            "ready": state,
        },
        "gateway-namespace": {
            "resource": {
                "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
                "kind": "Object",
                "metadata": {"name": object_name("gateway-namespace"), "namespace": "p"},
                "spec": {
                    "forProvider": {
                        "manifest": {
                            "apiVersion": "v1",
                            "kind": "Namespace",
                            "metadata": {
                                "name": "modelplane-system",
                                "labels": {"app.kubernetes.io/managed-by": "modelplane"},
                            },
                        }
                    },
                    "providerConfigRef": PROVIDER,
                    "readiness": {"policy": "SuccessfulCreate"},
                    "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"],
                },
            },
            "ready": state,
        },
        # Read only: which implementation serves the class.
        "gateway-class": {
            "resource": {
                "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
                "kind": "Object",
                "metadata": {"name": object_name("gateway-class"), "namespace": "p"},
                "spec": {
                    "forProvider": {"manifest": GATEWAY_CLASS},
                    "providerConfigRef": PROVIDER,
                    "managementPolicies": ["Observe"],
                    "watch": True,
                },
            },
            "ready": state,
        },
    }


def running(address: str | None, controller: str | None = None) -> Obj:
    """The Objects as provider-kubernetes reports them once applied, the Gateway
    programmed (at `address`, when given), the GatewayClass served by `controller`."""
    out: Obj = {}
    for key, value in composed(True).items():
        obj = {**value["resource"]}
        status: Obj = {"conditions": [{"type": "Ready", "status": "True"}]}
        if key == "gateway-class" and controller:
            status["atProvider"] = {
                "manifest": {**GATEWAY_CLASS, "spec": {"controllerName": controller}}
            }
        if key == "gateway":
            manifest = dict(obj["spec"]["forProvider"]["manifest"])
            manifest["status"] = {"conditions": [{"type": "Programmed", "status": "True"}]}
            if address:
                manifest["status"]["addresses"] = [{"type": "IPAddress", "value": address}]
            status["atProvider"] = {"manifest": manifest}
        obj["status"] = status
        out[key] = obj
    return out


def condition(type_: str, status: bool | None, reason: str, message: str) -> Obj:
    word = {True: "TRUE", False: "FALSE", None: "UNKNOWN"}[status]
    return {
        "type": type_,
        "status": f"STATUS_CONDITION_{word}",
        "reason": reason,
        "message": message,
        "target": "TARGET_COMPOSITE",
    }


VALID = condition("Valid", True, "Valid", "entry Gateway on InferenceCluster hub")
PROGRAMMED = condition(
    "Programmed",
    True,
    "GatewayProgrammed",
    "Gateway modelplane-entry-fleet is programmed; reached at http://203.0.113.10",
)


def response(resources: Obj, status: Obj | None, conditions: list[Obj], **extra: Any) -> Obj:
    desired: Obj = {}
    if status is not None:
        desired["composite"] = {"resource": {"status": status}}
    if resources:
        desired["resources"] = resources
    return {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": desired,
        "requirements": REQUIREMENTS,
        "context": {},
        "conditions": conditions,
        **extra,
    }


def published(address: str | None, controller: str | None = None) -> Obj:
    status: Obj = {"gatewayRef": GATEWAY_REF, "providerConfigRef": PROVIDER}
    if address:
        status["address"] = address
    if controller:
        status["controllerName"] = controller
    return status


CASES = [
    pytest.param(
        request(gateway(), required={"inferencecluster": [cluster()]}),
        response(
            composed(False),
            published("http://models.example.com"),
            [
                VALID,
                condition(
                    "Programmed", False, "GatewayNotProgrammed", "Gateway has not been observed yet"
                ),
            ],
        ),
        id="composed, not programmed yet: its hostname is its address already",
    ),
    pytest.param(
        request(
            gateway(hostname=None),
            observed=running("203.0.113.10"),
            required={"inferencecluster": [cluster()]},
        ),
        response(
            {k: {**v, "ready": "READY_TRUE"} for k, v in composed(True, None).items()},
            published("http://203.0.113.10"),
            [
                VALID,
                condition(
                    "Programmed",
                    True,
                    "GatewayProgrammed",
                    "Gateway modelplane-entry-fleet is programmed; reached at http://203.0.113.10",
                ),
            ],
        ),
        id="programmed, without a hostname: the address the Gateway reports",
    ),
    pytest.param(
        request(
            gateway(hostname=None, status={"address": "http://203.0.113.10"}),
            observed=running(None),
            required={"inferencecluster": [cluster()]},
        ),
        response(
            {k: {**v, "ready": "READY_TRUE"} for k, v in composed(True, None).items()},
            published("http://203.0.113.10"),
            [
                VALID,
                condition(
                    "Programmed",
                    True,
                    "GatewayProgrammed",
                    "Gateway modelplane-entry-fleet is programmed; reached at http://203.0.113.10",
                ),
            ],
        ),
        id="an address once reported stays while the Gateway reports none",
    ),
    pytest.param(
        request(
            gateway(hostname=None),
            observed=running("203.0.113.10", ENVOY_GATEWAY),
            required={"inferencecluster": [cluster()]},
        ),
        response(
            {k: {**v, "ready": "READY_TRUE"} for k, v in composed(True, None).items()},
            published("http://203.0.113.10", ENVOY_GATEWAY),
            [VALID, PROGRAMMED],
        ),
        id="the class's controller as read is published for ModelServices",
    ),
    pytest.param(
        request(
            gateway(
                hostname=None,
                status={"address": "http://203.0.113.10", "controllerName": ENVOY_GATEWAY},
            ),
            observed=running("203.0.113.10"),
            required={"inferencecluster": [cluster()]},
        ),
        response(
            {k: {**v, "ready": "READY_TRUE"} for k, v in composed(True, None).items()},
            published("http://203.0.113.10", ENVOY_GATEWAY),
            [VALID, PROGRAMMED],
        ),
        id="a controller once read stays while the class reads back without one",
    ),
]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_compose(req: Any, want: Obj) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


STATUS = published("http://models.example.com")


def test_until_the_hub_is_fetched_it_asks_for_it_and_nothing_else() -> None:
    """Never kept by Crossplane's fetch loop: the requirements and context only
    (design/required-resources.md)."""
    req = request(gateway(status=STATUS), observed=running("203.0.113.10"))
    got = as_dict(run(FunctionRunner(), req))
    assert got == requirements_only(
        {
            "inferencecluster": {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "InferenceCluster",
                "matchName": "hub",
            }
        }
    )


@pytest.mark.parametrize(
    ("found", "condition_"),
    [
        pytest.param(
            {"inferencecluster": []},
            condition(
                "Valid",
                False,
                "ClusterNotFound",
                "spec.clusterRef.name: InferenceCluster 'hub' not found",
            ),
            id="the hub does not exist",
        ),
        pytest.param(
            {"inferencecluster": [cluster(connected=False)]},
            condition(
                "Valid",
                False,
                "ClusterNotConnected",
                "spec.clusterRef.name: InferenceCluster 'hub' has no status.providerConfigRef yet",
            ),
            id="the hub is not connected",
        ),
        pytest.param(
            {"inferencecluster": [{"metadata": {"name": "hub"}, "spec": "garbage"}]},
            None,
            id="the hub does not read",
        ),
    ],
)
def test_what_runs_stays_when_the_hub_cannot_be_used(found: Obj, condition_: Obj | None) -> None:
    req = request(gateway(status=STATUS), observed=running("203.0.113.10"), required=found)
    got = as_dict(run(FunctionRunner(), req))
    assert sorted(got["desired"]["resources"]) == ["gateway", "gateway-class", "gateway-namespace"]
    assert all(r["ready"] == "READY_TRUE" for r in got["desired"]["resources"].values())
    assert got["desired"]["composite"]["resource"]["status"] == STATUS
    (valid,) = [c for c in got["conditions"] if c["type"] == "Valid"]
    if condition_ is not None:
        assert valid == condition_
    assert valid["status"] != "STATUS_CONDITION_TRUE"
    assert got["requirements"] == REQUIREMENTS
