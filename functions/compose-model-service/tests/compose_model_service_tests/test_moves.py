"""compose-model-service when its gateway is on another hub cluster than its objects
(spec.gatewayRef names a gateway on another hub, or the InferenceGateway moved): the
hub objects go under keys of the new hub, so Crossplane deletes the old hub's
route, backends and Namespace Object (through their own ProviderConfig) instead of
provider-kubernetes re-pointing them and leaving the route on the old hub holding
the hostname."""

import copy
from typing import Any

from compose_model_service.fn import FunctionRunner

from modelplane.core import naming
from modelplane_dev.testing import as_dict, run, run_over_grpc

from .objects import SERVING, TLS_POLICY_KEY, gateway, hub_cluster, request, required, service
from .test_bad_edits import PUBLISHED, RUNNING
from .test_fn import STEADY
from .test_tls import pending_response

Obj = dict[str, Any]
EU = "serve-eu-west"
EU_PROVIDER = {"kind": "ClusterProviderConfig", "name": EU}


def _gateway_on_eu() -> Obj:
    moved = gateway()
    moved["spec"]["clusterRef"] = {"name": EU}
    moved["status"]["providerConfigRef"] = EU_PROVIDER
    return moved


def _hub_eu() -> Obj:
    found = hub_cluster()
    found["metadata"]["name"] = EU
    return found


def _on_eu(want: Obj) -> Obj:
    """`want` with every hub object under `<key>@serve-eu-west`, named for that key and
    applied through the new hub's ProviderConfig."""
    moved = copy.deepcopy(want)
    resources: Obj = {}
    for key, value in moved["desired"]["resources"].items():
        new_key = f"{key}@{EU}"
        obj = value["resource"]
        obj["metadata"]["name"] = naming.hashed_name(f"chat-{key}", "ModelService", "chat", new_key)
        obj["spec"]["providerConfigRef"] = EU_PROVIDER
        resources[new_key] = value
    moved["desired"]["resources"] = resources
    moved["requirements"]["resources"]["hubcluster"]["matchName"] = EU
    return moved


def _ready(want: Obj) -> Obj:
    """What `want` composes, observed Ready on its hub."""
    return {
        key: {**value["resource"], "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        for key, value in want["desired"]["resources"].items()
    }


def _routed(got: Obj) -> Obj:
    (found,) = [c for c in got["conditions"] if c["type"] == "Routed"]
    return found


def test_a_move_to_another_hub_composes_there_and_keeps_the_old_hub_until_it_routes() -> None:
    """Make-before-break: the old hub's route, backends and Namespace Object stay as
    they run until the route on the new hub is accepted, so the old address serves
    while the new one comes up; then they are no longer emitted, and Crossplane
    deletes them through their own ProviderConfig."""
    on_eu = required(gateways=[_gateway_on_eu()], hub=[_hub_eu()])
    req = request({**service(), "status": PUBLISHED}, observed=RUNNING, required=on_eu)
    # Nothing of it runs on the new hub yet: the https endpoint waits for its new
    # BackendTLSPolicy there, as on a first reconcile.
    want = _on_eu(pending_response())
    got = as_dict(run(FunctionRunner(), req))
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == got
    resources = got["desired"]["resources"]
    new = {k: v for k, v in resources.items() if k.endswith(f"@{EU}")}
    assert new == want["desired"]["resources"]
    kept = {k: v["resource"] for k, v in resources.items() if k not in new}
    assert sorted(kept) == sorted(RUNNING)
    for key, obj in kept.items():
        assert obj["spec"] == RUNNING[key]["spec"], key  # as it runs, on the old hub
    assert (got["desired"]["composite"], got["requirements"]) == (
        want["desired"]["composite"],
        want["requirements"],
    )
    assert "the route on the hub it moved from serves until then" in _routed(got)["message"]

    # The route on the new hub is accepted: the old hub's objects go.
    there = {**RUNNING, **_ready(_on_eu(STEADY))}
    settled = as_dict(run(FunctionRunner(), request(service(), observed=there, required=on_eu)))
    assert sorted(settled["desired"]["resources"]) == sorted(
        f"{k}@{EU}" for k in STEADY["desired"]["resources"]
    )
    assert _routed(settled)["status"] == "STATUS_CONDITION_TRUE"


def test_once_moved_the_keys_stay_and_a_move_back_uses_plain_keys() -> None:
    there = _ready(_on_eu(STEADY))
    on_eu = required(gateways=[_gateway_on_eu()], hub=[_hub_eu()])
    got = as_dict(run(FunctionRunner(), request(service(), observed=there, required=on_eu)))
    assert sorted(got["desired"]["resources"]) == sorted(
        f"{k}@{EU}" for k in STEADY["desired"]["resources"]
    )
    # The policy observed under the new hub's key: the endpoint has its share again.
    assert got["desired"]["composite"] == STEADY["desired"]["composite"]
    back = as_dict(run(FunctionRunner(), request(service(), observed=there, required=required())))
    # Plain keys again, the new hub's kept until the route back is accepted.
    assert set(back["desired"]["resources"]) == set(STEADY["desired"]["resources"]) | set(there)
    assert TLS_POLICY_KEY in back["desired"]["resources"]
    home = {**there, **_ready(STEADY)}
    settled = as_dict(run(FunctionRunner(), request(service(), observed=home, required=required())))
    assert sorted(settled["desired"]["resources"]) == sorted(STEADY["desired"]["resources"])


def test_the_hub_it_stays_on_keeps_plain_keys() -> None:
    # An upgrade renames nothing: objects running under plain keys on this hub stay.
    got = as_dict(run(FunctionRunner(), request(service(), observed=RUNNING, required=required())))
    assert sorted(got["desired"]["resources"]) == sorted(STEADY["desired"]["resources"])


def test_a_gateway_moving_on_before_its_new_hub_is_connected_churns_nothing() -> None:
    """The gateway's spec names a third cluster while its status still carries the hub
    the objects run on: the service stays on that hub whole (its keys, its tenancy, its
    in-cluster backends, the hub cluster it reads), with no delete and re-create of the
    same route on the same hub, until the gateway has moved."""
    there = {
        key: {**value["resource"], "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        for key, value in _on_eu(STEADY)["desired"]["resources"].items()
    }
    moving = _gateway_on_eu()
    moving["spec"]["clusterRef"] = {"name": "serve-ap-south"}
    got = as_dict(
        run(
            FunctionRunner(),
            request(
                service(), observed=there, required=required(gateways=[moving], hub=[_hub_eu()])
            ),
        )
    )
    staying = _on_eu(STEADY)
    composed = {k: v["resource"] for k, v in got["desired"]["resources"].items()}
    assert composed == {k: v["resource"] for k, v in staying["desired"]["resources"].items()}
    assert got["requirements"] == staying["requirements"]


def test_while_moving_the_replicas_the_old_route_sends_to_stay_listed() -> None:
    """A replica the new plan drops (its endpoint gone) while the old hub's route is kept
    still gets that route's traffic: it stays in `status.endpoints` at weight 0, so its
    deployment does not retire it yet; once the move is done it is not listed."""
    first, *rest = SERVING
    on_eu = required(endpoints=rest, gateways=[_gateway_on_eu()], hub=[_hub_eu()])
    got = as_dict(
        run(
            FunctionRunner(),
            request({**service(), "status": PUBLISHED}, observed=RUNNING, required=on_eu),
        )
    )
    listed = {
        e.get("replica"): e["weight"]
        for e in got["desired"]["composite"]["resource"]["status"]["endpoints"]
    }
    dropped = first["spec"]["replicaName"]
    assert listed[dropped] == 0

    there = {**RUNNING, **_ready(_on_eu(STEADY))}
    done = as_dict(
        run(
            FunctionRunner(),
            request({**service(), "status": PUBLISHED}, observed=there, required=on_eu),
        )
    )
    endpoints = done["desired"]["composite"]["resource"]["status"]["endpoints"]
    assert dropped not in {e.get("replica") for e in endpoints}
