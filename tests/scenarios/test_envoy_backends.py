"""examples/serving on a hub served by Envoy Gateway: the hub's route reaches every
DNS-named backend (the other cluster's Gateway, the hub's own cluster Gateway, the
external model) through an Envoy Gateway Backend, which Envoy Gateway routes to,
instead of an ExternalName Service, which it does not."""

from collections.abc import Callable

import pytest

from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, Obj, Renderer
from .test_examples import assert_valid

ENVOY_GATEWAY = "gateway.envoyproxy.io/gatewayclass-controller"


def _manifest(obj: Obj) -> Obj:
    return obj.get("spec", {}).get("forProvider", {}).get("manifest", {})


def _of(fleet: Fleet, composite: str) -> list[Obj]:
    return [
        _manifest(o)
        for o in fleet.all("Object")
        if o["metadata"].get("labels", {}).get("crossplane.io/composite") == composite
    ]


def _served_by(controller: str) -> Callable[[list[Obj]], None]:
    """A world edit: the GatewayClass reads back as served by `controller`."""

    def edit(objects: list[Obj]) -> None:
        for obj in objects:
            if obj["kind"] == "Object" and _manifest(obj).get("kind") == "GatewayClass":
                read = obj["status"]["atProvider"]["manifest"]
                read["spec"] = {"controllerName": controller}

    return edit


@pytest.fixture(scope="module")
def on_envoy_gateway(renderer: Renderer) -> Fleet:
    serving = renderer.paths("catalog", "serving")
    assert serving.result.ok, serving.result.errors
    rendered = serving.edit(_served_by(ENVOY_GATEWAY))
    assert rendered.result.ok, rendered.result.errors
    return rendered


def test_the_gateway_publishes_its_class_controller(on_envoy_gateway: Fleet) -> None:
    status = on_envoy_gateway.one("InferenceGateway", "fleet")["status"]
    assert status["controllerName"] == ENVOY_GATEWAY


def test_every_dns_named_backend_is_an_envoy_gateway_backend(on_envoy_gateway: Fleet) -> None:
    hub = _of(on_envoy_gateway, "chat")
    assert not [m for m in hub if m["kind"] == "Service"]
    backends = {m["metadata"]["name"]: m["spec"] for m in hub if m["kind"] == "Backend"}
    assert len(backends) == 4
    hosts = sorted(s["endpoints"][0]["fqdn"]["hostname"] for s in backends.values())
    assert hosts == [
        "api.example-saas.com",
        "modelplane-replicas.modelplane-system.serve-eu-west.example",
        "modelplane-replicas.modelplane-system.serve-us-east.example",
        "modelplane-replicas.modelplane-system.serve-us-east.example",
    ]
    # The https external model's Backend originates TLS itself; no BackendTLSPolicy is left.
    tls = {n: s["tls"] for n, s in backends.items() if "tls" in s}
    assert list(tls.values()) == [
        {"sni": "api.example-saas.com", "wellKnownCACertificates": "System"}
    ]
    assert not [m for m in hub if m["kind"] == "BackendTLSPolicy"]
    (route,) = [m for m in hub if m["kind"] == "HTTPRoute"]
    refs = route["spec"]["rules"][0]["backendRefs"]
    assert {(r["group"], r["kind"]) for r in refs} == {("gateway.envoyproxy.io", "Backend")}
    assert sorted(r["name"] for r in refs) == sorted(backends)
    status = on_envoy_gateway.one("ModelService", "chat")["status"]
    assert sum(e["weight"] for e in status["endpoints"]) == 10000


def test_the_backends_are_valid(
    on_envoy_gateway: Fleet, manifest_validator: ManifestValidator
) -> None:
    # Against Envoy Gateway's CRD where `make crds` fetched it, else the project's own
    # schema of it (provider_kinds.yaml).
    assert_valid(on_envoy_gateway, manifest_validator)


def test_another_implementation_keeps_external_name_services(renderer: Renderer) -> None:
    serving = renderer.paths("catalog", "serving")
    rendered = serving.edit(_served_by("example.com/gateway-controller"))
    assert rendered.result.ok, rendered.result.errors
    kinds = sorted(m["kind"] for m in _of(rendered, "chat"))
    # The https external model's ExternalName Service has its BackendTLSPolicy.
    assert kinds == [
        "BackendTLSPolicy",
        "HTTPRoute",
        "Namespace",
        "Service",
        "Service",
        "Service",
        "Service",
    ]
