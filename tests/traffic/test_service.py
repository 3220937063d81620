"""A ModelService's hub route: every serving replica and external model, weighted, valid."""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.traffic.service import MAX_BACKENDS, Endpoint, Entry, Hub, Service, plan
from modelplane.traffic.urls import parse_url
from modelplane.traffic.weights import SCALE
from modelplane_cli.schema import ManifestValidator, SchemaRegistry
from modelplane_cli.schema.upstream import STANDIN_DIRECTORY

HUB = Hub("fleet", "east", "modelplane-entry-fleet", "modelplane-system", None, "http://gw.ex")
DEPLOYMENTS = ("a", "b", "c")
# Envoy Gateway's Backend and Gateway API's BackendTLSPolicy are not among
# ../shared/crds: the stand-in schemas, unless `make crds` fetched them.
STANDINS = [
    Path(__file__).parents[1] / "scenarios" / "provider_kinds.yaml",
    *sorted(STANDIN_DIRECTORY.glob("*.yaml")),
]
ENVOY = Hub("fleet", "east", "g", "modelplane-system", None, "http://gw.ex", envoy=True)


def created(_key: str) -> bool:
    """Every hub object is ready: an https backend's BackendTLSPolicy exists."""
    return True


def endpoint(deployment: str, i: int, host: str = "gw.east.example") -> Endpoint:
    replica = f"{deployment}-{i}"
    return Endpoint(deployment, replica, "east", parse_url(f"http://{host}/mp-ml/{replica}", "u"))


def service(*entries: Entry, hostname: str | None = None) -> Service:
    return Service("ml", "chat", "mp-ml", hostname, entries)


@st.composite
def fleets(draw: st.DrawFn, most: int = 6) -> tuple[Service, dict[str, list[Endpoint]]]:
    """A service over three deployments (and maybe an external model), each with up to
    `most` serving replicas: past 16 backends when `most` is large enough."""
    entries = [
        Entry(f"spec.endpoints[{i}]", draw(st.integers(0, 100)), deployment=name)
        for i, name in enumerate(DEPLOYMENTS)
    ]
    if draw(st.booleans()):
        external = parse_url("https://api.example.com/v1", "u")
        entries.append(Entry("spec.endpoints[3]", draw(st.integers(0, 100)), external=external))
    serving = {
        name: [endpoint(name, i) for i in range(draw(st.integers(0, most)))] for name in DEPLOYMENTS
    }
    return service(*entries), serving


@given(fleets(most=14))
def test_every_reachable_serving_replica_is_a_backend_and_the_weights_add_up(
    drawn: tuple[Service, dict[str, list[Endpoint]]],
) -> None:
    svc, serving = drawn
    routes = plan(svc, HUB, serving, created)
    replicas = [e["replica"] for e in routes.endpoints if "replica" in e]
    wanted = sorted(e.replica for name in DEPLOYMENTS for e in serving[name])
    if len(wanted) + any(x.external for x in svc.entries) <= MAX_BACKENDS:
        assert sorted(replicas) == wanted
    else:
        assert len(routes.endpoints) == MAX_BACKENDS
        assert [i.reason for i in routes.issues] == ["TooManyBackends"]
        # However many replicas one deployment has, none pushes another out of the route.
        routed = {e["deployment"] for e in routes.endpoints if "deployment" in e}
        assert routed == {name for name in DEPLOYMENTS if serving[name]}
    weights = [e["weight"] for e in routes.endpoints]
    assert sum(weights) in (0, SCALE)
    rule = routes.objects["route"]["spec"]["rules"][0]
    assert [b["weight"] for b in rule["backendRefs"]] == weights
    # Reversed endpoint order, same plan: the route never depends on list order.
    reversed_ = {name: list(reversed(found)) for name, found in serving.items()}
    assert plan(svc, HUB, reversed_, created) == routes


@given(fleets(), st.sampled_from(DEPLOYMENTS))
def test_a_replica_that_stops_serving_leaves_and_the_rest_keep_their_order(
    drawn: tuple[Service, dict[str, list[Endpoint]]], deployment: str
) -> None:
    svc, serving = drawn
    if not serving[deployment]:
        return
    before = plan(svc, HUB, serving)
    if before.issues:
        return  # more than a rule holds: a backend left out before may come in
    gone = serving[deployment][0].replica
    after = plan(svc, HUB, {**serving, deployment: serving[deployment][1:]})
    names = [e.get("replica", e["url"]) for e in before.endpoints]
    assert [e.get("replica", e["url"]) for e in after.endpoints] == [n for n in names if n != gone]
    assert f"backend-{gone}" not in after.objects


def test_the_share_of_a_deployment_with_nothing_serving_goes_to_the_others() -> None:
    svc = service(
        Entry("e0", 60, deployment="a"),
        Entry("e1", 30, deployment="b"),
        Entry("e2", 10, external=parse_url("https://x.example/v1", "u")),
    )
    serving = {"a": [endpoint("a", 0), endpoint("a", 1)], "b": [endpoint("b", 0)]}
    both = plan(svc, HUB, serving, created)
    assert [e["weight"] for e in both.endpoints] == [3000, 3000, 3000, 1000]
    only_a = plan(svc, HUB, {"a": [endpoint("a", 0), endpoint("a", 1)], "b": []}, created)
    assert [e["weight"] for e in only_a.endpoints] == [4286, 4286, 1428]
    none = plan(svc, HUB, {"a": [], "b": []}, created)
    assert [e["weight"] for e in none.endpoints] == [SCALE]
    assert none.routed == 1


def test_addresses() -> None:
    svc = service(Entry("e0", 1, deployment="a"))
    assert plan(svc, HUB, {}).address == "http://gw.ex/ml/chat"
    assert plan(svc, HUB, {}).routed == 0
    named = service(Entry("e0", 1, deployment="a"), hostname="chat.models.example.com")
    assert plan(named, HUB, {}).address == "http://chat.models.example.com"
    waiting = Hub("fleet", "east", "g", "modelplane-system", None, None)
    assert plan(svc, waiting, {}).address is None


def _objects() -> list[dict[str, Any]]:
    svc = service(
        Entry("e0", 60, deployment="a"),
        Entry("e1", 30, deployment="b"),
        Entry("e2", 10, external=parse_url("https://api.example.com/v1", "u")),
        Entry("e3", 5, external=parse_url("http://192.0.2.10:8080", "u")),
        hostname="chat.models.example.com",
    )
    serving = {
        "a": [endpoint("a", 0), endpoint("a", 1, host="203.0.113.5")],
        "b": [endpoint("b", 0, host="[2001:db8::7]")],
    }
    routes = plan(svc, HUB, serving)
    path = service(Entry("e0", 1, deployment="a"))
    envoy = plan(svc, ENVOY, serving)
    return [
        *routes.objects.values(),
        *plan(path, HUB, serving).objects.values(),
        *(o for o in envoy.objects.values() if o["kind"] == "Backend"),
    ]


@pytest.mark.parametrize("obj", _objects(), ids=lambda o: f"{o['kind']}/{o['metadata']['name']}")
def test_everything_a_service_composes_is_valid(
    obj: dict[str, Any], manifest_validator: ManifestValidator
) -> None:
    registry = SchemaRegistry.from_files(STANDINS)
    registry.merge(manifest_validator.registry)
    validator = ManifestValidator(registry, manifest_validator.kubernetes_version)
    assert validator.check(obj, "1.34").rejected == []


SAAS = parse_url("https://api.example.com/v1", "u")


def _saas(hub: Hub, ready: bool) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    svc = service(Entry("e0", 90, deployment="a"), Entry("e1", 10, external=SAAS))
    routes = plan(svc, hub, {"a": [endpoint("a", 0)]}, lambda _key: ready)
    kinds = {k: o["kind"] for k, o in routes.objects.items() if "external" in k}
    refs = routes.objects["route"]["spec"]["rules"][0]["backendRefs"]
    return (
        kinds,
        [{"kind": r["kind"], "weight": r["weight"]} for r in refs],
        [i.reason for i in routes.issues],
    )


def test_an_https_endpoint_gets_traffic_only_once_its_tls_policy_exists() -> None:
    kinds, refs, reasons = _saas(HUB, ready=False)
    assert sorted(kinds.values()) == ["BackendTLSPolicy", "Service"]
    # Never plaintext: no backendRef until the policy's Object is ready, and a warning.
    assert refs == [{"kind": "Service", "weight": SCALE}]
    assert reasons == ["TLSPolicyPending"]
    kinds, refs, reasons = _saas(HUB, ready=True)
    assert refs == [{"kind": "Service", "weight": 9000}, {"kind": "Service", "weight": 1000}]
    assert reasons == []


def test_on_envoy_gateway_the_backend_itself_originates_tls() -> None:
    kinds, refs, reasons = _saas(ENVOY, ready=False)
    assert list(kinds.values()) == ["Backend"]
    assert refs == [{"kind": "Backend", "weight": 9000}, {"kind": "Backend", "weight": 1000}]
    assert reasons == []
    svc = service(Entry("e1", 10, external=SAAS))
    (backend,) = (o for o in plan(svc, ENVOY, {}).objects.values() if o["kind"] == "Backend")
    assert backend["spec"]["tls"] == {"sni": "api.example.com", "wellKnownCACertificates": "System"}


def test_an_https_endpoint_at_an_ip_address_gets_no_traffic_ever() -> None:
    ip = parse_url("https://203.0.113.9/v1", "u")
    svc = service(Entry("e0", 90, deployment="a"), Entry("e1", 10, external=ip))
    for hub in (HUB, ENVOY):
        routes = plan(svc, hub, {"a": [endpoint("a", 0)]}, created)
        refs = routes.objects["route"]["spec"]["rules"][0]["backendRefs"]
        assert [r["weight"] for r in refs] == [SCALE]
        assert [i.reason for i in routes.issues] == ["TLSUnverifiable"]
        # Its objects stay, listed at weight 0.
        assert routes.endpoints[-1] == {"external": True, "url": str(ip), "weight": 0}
        assert sorted(o["kind"] for k, o in routes.objects.items() if "external" in k) == [
            "EndpointSlice",
            "Service",
        ]


def test_a_rule_full_of_one_deployments_replicas_keeps_every_endpoints_weight() -> None:
    svc = service(Entry("e0", 50, deployment="a"), Entry("e1", 50, deployment="b"))
    serving = {
        "a": [endpoint("a", i) for i in range(20)],
        "b": [endpoint("b", i) for i in range(3)],
    }
    routes = plan(svc, HUB, serving, created)
    per_deployment: dict[str, list[int]] = {}
    for e in routes.endpoints:
        per_deployment.setdefault(e["deployment"], []).append(e["weight"])
    # b's three replicas all stay; a keeps the rest; each deployment still gets half.
    assert [len(per_deployment["a"]), len(per_deployment["b"])] == [13, 3]
    # (to the unit: the largest remainder rounds 13 equal parts of half)
    assert all(abs(sum(weights) - SCALE // 2) <= 1 for weights in per_deployment.values())
    (issue,) = routes.issues
    assert issue.message == (
        "23 backends resolve but a Gateway API rule holds 16; the route sends to a 13 of "
        "its 20 serving replicas, every endpoint keeping its weight"
    )
