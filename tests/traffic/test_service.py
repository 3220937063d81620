"""A ModelService's hub route: every serving replica and external model, weighted, valid."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.traffic.service import MAX_BACKENDS, Endpoint, Entry, Hub, Service, plan
from modelplane.traffic.urls import parse_url
from modelplane.traffic.weights import SCALE
from modelplane_cli.schema import ManifestValidator

HUB = Hub("fleet", "east", "modelplane-entry-fleet", "modelplane-system", None, "http://gw.ex")
DEPLOYMENTS = ("a", "b", "c")


def endpoint(deployment: str, i: int, host: str = "gw.east.example") -> Endpoint:
    replica = f"{deployment}-{i}"
    return Endpoint(deployment, replica, "east", parse_url(f"http://{host}/mp-ml/{replica}", "u"))


def service(*entries: Entry, hostname: str | None = None) -> Service:
    return Service("ml", "chat", "mp-ml", hostname, entries)


@st.composite
def fleets(draw: st.DrawFn) -> tuple[Service, dict[str, list[Endpoint]]]:
    entries = [
        Entry(f"spec.endpoints[{i}]", draw(st.integers(0, 100)), deployment=name)
        for i, name in enumerate(DEPLOYMENTS)
    ]
    if draw(st.booleans()):
        external = parse_url("https://api.example.com/v1", "u")
        entries.append(Entry("spec.endpoints[3]", draw(st.integers(0, 100)), external=external))
    serving = {
        name: [endpoint(name, i) for i in range(draw(st.integers(0, 6)))] for name in DEPLOYMENTS
    }
    return service(*entries), serving


@given(fleets())
def test_every_reachable_serving_replica_is_a_backend_and_the_weights_add_up(
    drawn: tuple[Service, dict[str, list[Endpoint]]],
) -> None:
    svc, serving = drawn
    routes = plan(svc, HUB, serving)
    replicas = [e["replica"] for e in routes.endpoints if "replica" in e]
    wanted = sorted(e.replica for name in DEPLOYMENTS for e in serving[name])
    if len(wanted) + any(x.external for x in svc.entries) <= MAX_BACKENDS:
        assert sorted(replicas) == wanted
    else:
        assert len(routes.endpoints) == MAX_BACKENDS
        assert [i.reason for i in routes.issues] == ["TooManyBackends"]
    weights = [e["weight"] for e in routes.endpoints]
    assert sum(weights) in (0, SCALE)
    rule = routes.objects["route"]["spec"]["rules"][0]
    assert [b["weight"] for b in rule["backendRefs"]] == weights
    # Reversed endpoint order, same plan: the route never depends on list order.
    reversed_ = {name: list(reversed(found)) for name, found in serving.items()}
    assert plan(svc, HUB, reversed_) == routes


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
    both = plan(svc, HUB, {"a": [endpoint("a", 0), endpoint("a", 1)], "b": [endpoint("b", 0)]})
    assert [e["weight"] for e in both.endpoints] == [3000, 3000, 3000, 1000]
    only_a = plan(svc, HUB, {"a": [endpoint("a", 0), endpoint("a", 1)], "b": []})
    assert [e["weight"] for e in only_a.endpoints] == [4286, 4286, 1428]
    none = plan(svc, HUB, {"a": [], "b": []})
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
    return [*routes.objects.values(), *plan(path, HUB, serving).objects.values()]


@pytest.mark.parametrize("obj", _objects(), ids=lambda o: f"{o['kind']}/{o['metadata']['name']}")
def test_everything_a_service_composes_is_valid(
    obj: dict[str, Any], manifest_validator: ManifestValidator
) -> None:
    assert manifest_validator.check(obj, "1.34").rejected == []
