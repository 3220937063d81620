"""compose-inference-gateway when spec.clusterRef names another cluster: the entry
Gateway moves. Its Objects go under keys of the new hub, so Crossplane deletes the
old hub's (through their own ProviderConfig) instead of provider-kubernetes
re-pointing them and leaving the Gateway running on the old hub."""

import copy
from typing import Any

from compose_inference_gateway.fn import FunctionRunner

from modelplane.core import naming
from modelplane_dev.testing import as_dict, request, run, run_over_grpc

from .test_fn import (
    GATEWAY_REF,
    REQUIREMENTS,
    VALID,
    cluster,
    composed,
    condition,
    gateway,
    response,
    running,
)

Obj = dict[str, Any]
MOVED_TO = {"kind": "ClusterProviderConfig", "name": "hub-eu"}


def moved(gateway_: Obj) -> Obj:
    moved_ = copy.deepcopy(gateway_)
    moved_["spec"]["clusterRef"] = {"name": "hub-eu"}
    return moved_


def eu_cluster() -> Obj:
    found = cluster()
    found["metadata"]["name"] = "hub-eu"
    found["spec"]["cluster"]["existing"]["secretRef"] = {"name": "k", "namespace": "p-eu"}
    found["status"] = {"providerConfigRef": MOVED_TO}
    return found


def on_eu(hostname: str | None) -> Obj:
    """`composed` on hub-eu: every Object under `<key>@hub-eu`, named for that key,
    beside hub-eu's own Objects and through its ProviderConfig."""
    found: Obj = {}
    for key, value in composed(False, hostname).items():
        obj = copy.deepcopy(value)
        resource = obj["resource"]
        # Named for the plain key (a Kubernetes name takes no `@`), hashed with the
        # hub's key.
        name = naming.hashed_name(f"fleet-{key}", "InferenceGateway", "fleet", f"{key}@hub-eu")
        assert naming.is_dns_label(name), name
        resource["metadata"] = {"name": name, "namespace": "p-eu"}
        resource["spec"]["providerConfigRef"] = MOVED_TO
        found[f"{key}@hub-eu"] = obj
    return found


REQUIRES_EU = {
    "resources": {
        "inferencecluster": {**REQUIREMENTS["resources"]["inferencecluster"], "matchName": "hub-eu"}
    }
}
NOT_PROGRAMMED = condition(
    "Programmed", False, "GatewayNotProgrammed", "Gateway has not been observed yet"
)


def test_a_move_composes_on_the_new_hub_under_its_keys_and_drops_the_old() -> None:
    status = {"address": "http://203.0.113.10", "gatewayRef": GATEWAY_REF}
    req = request(
        moved(gateway(hostname=None, status=status)),
        observed=running("203.0.113.10"),
        required={"inferencecluster": [eu_cluster()]},
    )
    want = response(
        on_eu(None),
        # The old hub's address is not carried over: the new Gateway has none yet.
        {"gatewayRef": GATEWAY_REF, "providerConfigRef": MOVED_TO},
        [
            condition("Valid", True, "Valid", "entry Gateway on InferenceCluster hub-eu"),
            NOT_PROGRAMMED,
        ],
    )
    want["requirements"] = REQUIRES_EU
    assert as_dict(run(FunctionRunner(), req)) == want
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def test_after_the_move_the_keys_stay_and_a_move_back_uses_plain_keys() -> None:
    # On hub-eu, its Objects observed there: the same keys again, nothing churns.
    there = {
        key: {**value["resource"], "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        for key, value in on_eu("models.example.com").items()
    }
    req = request(moved(gateway()), observed=there, required={"inferencecluster": [eu_cluster()]})
    keys = sorted(as_dict(run(FunctionRunner(), req))["desired"]["resources"])
    assert keys == ["gateway-class@hub-eu", "gateway-namespace@hub-eu", "gateway@hub-eu"]
    # Back to the first hub: the plain keys are free there, so it uses them.
    back = request(gateway(), observed=there, required={"inferencecluster": [cluster()]})
    want = response(composed(False), None, [VALID, NOT_PROGRAMMED])
    got = as_dict(run(FunctionRunner(), back))
    assert got["desired"]["resources"] == want["desired"]["resources"]


def test_the_hub_it_stays_on_keeps_plain_keys() -> None:
    # An upgrade renames nothing: Objects running under plain keys on this hub stay.
    req = request(
        gateway(), observed=running("203.0.113.10"), required={"inferencecluster": [cluster()]}
    )
    assert sorted(as_dict(run(FunctionRunner(), req))["desired"]["resources"]) == [
        "gateway",
        "gateway-class",
        "gateway-namespace",
    ]
