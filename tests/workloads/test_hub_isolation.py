"""Hub traffic reaches the replica its backend names, whatever path a client sends.

Two replicas of different teams sit behind one cluster Gateway. A hub route sends a
request to one of them through that Gateway; a client of that ModelService may put
the other replica's route prefix in its path. The cluster Gateway is modelled by
Gateway API's HTTPRoute matching rules (`modelplane_dev.gateway_routing`).
"""

import pytest

from modelplane.traffic.backends import Backend, replica_backend
from modelplane.traffic.urls import parse_url
from modelplane.workloads import render_replica
from modelplane.workloads.traffic import HUB_ROUTE_KEY, ROUTE_KEY
from modelplane_dev.gateway_routing import Obj, Request, route_to, through

from .conftest import cluster, replica
from .inputs import read_cluster, read_replica

GATEWAY = {"gatewayClassName": "eg"}


def _replica(name: str, namespace: str) -> tuple[list[Obj], str, str]:
    """The replica's HTTPRoutes on the cluster Gateway, its URL and its route prefix."""
    obj = replica(name=name, namespace=namespace)
    rendered = render_replica(
        read_replica(obj),
        read_cluster(cluster(gateway=GATEWAY, gateway_address="gw.example")),
    )
    objects = {o.key: o.manifest for o in rendered.objects()}
    assert rendered.url is not None
    prefix = objects[ROUTE_KEY]["spec"]["rules"][0]["matches"][0]["path"]["value"]
    return [objects[ROUTE_KEY], objects[HUB_ROUTE_KEY]], rendered.url, prefix


def _hub_backend(name: str, namespace: str, url: str) -> Backend:
    built = replica_backend(
        "chat",
        namespace,
        deployment="kimi-k2",
        replica=name,
        cluster="prod-us-east",
        url=parse_url(url, "url"),
        hub_cluster="hub",
    )
    assert isinstance(built, Backend)
    return built


OURS, THEIRS = ("ours-1", "team-a"), ("theirs-1", "team-b")


@pytest.mark.parametrize(
    "path",
    ["/v1/chat/completions", "{theirs}/v1/chat/completions", "{theirs}", "{ours}/v1/models"],
)
def test_a_hub_request_reaches_its_own_replica_whatever_path_it_carries(path: str) -> None:
    ours, our_url, our_prefix = _replica(*OURS)
    theirs, _, their_prefix = _replica(*THEIRS)
    request = Request("models.example.com", path.format(theirs=their_prefix, ours=our_prefix))

    sent = through(_hub_backend(OURS[0], OURS[1], our_url).ref, request)

    assert route_to([*ours, *theirs], sent) == ours[0]["spec"]["rules"][0]["backendRefs"][0]["name"]


def test_a_direct_request_is_routed_by_its_path() -> None:
    ours, _, _ = _replica(*OURS)
    theirs, _, their_prefix = _replica(*THEIRS)
    pool = theirs[0]["spec"]["rules"][0]["backendRefs"][0]["name"]

    request = Request("gw.example", f"{their_prefix}/v1/chat/completions")

    assert route_to([*ours, *theirs], request) == pool


def test_a_hub_request_reaches_a_replica_whose_cluster_has_no_hub_route_yet() -> None:
    """Reconciled before its hub route existed, a replica has only its path route: the
    header the hub still sets reaches it."""
    ours, our_url, _ = _replica(*OURS)
    theirs, _, _ = _replica(*THEIRS)
    sent = through(_hub_backend(OURS[0], OURS[1], our_url).ref, Request("hub", "/v1/models"))

    pool = ours[0]["spec"]["rules"][0]["backendRefs"][0]["name"]
    assert route_to([ours[0], theirs[0]], sent) == pool
