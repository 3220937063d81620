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


def _ready(found: Obj) -> Obj:
    return {
        key: {**value["resource"], "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        for key, value in found.items()
    }


def test_a_move_composes_on_the_new_hub_and_keeps_the_old_until_it_is_programmed() -> None:
    """Make-before-break: the Gateway on the old hub, at the address clients use, stays
    as it runs until the new one is programmed; then it is no longer emitted, and
    Crossplane deletes it through its own ProviderConfig."""
    status = {"address": "http://203.0.113.10", "gatewayRef": GATEWAY_REF}
    old = running("203.0.113.10")
    req = request(
        moved(gateway(hostname=None, status=status)),
        observed=old,
        required={"inferencecluster": [eu_cluster()]},
    )
    kept = "Gateway has not been observed yet; the Gateway on the cluster it moved from serves until then"
    want = response(
        on_eu(None),
        # The old hub's address is not carried over: the new Gateway has none yet.
        {"gatewayRef": GATEWAY_REF, "providerConfigRef": MOVED_TO},
        [
            condition("Valid", True, "Valid", "entry Gateway on InferenceCluster hub-eu"),
            condition("Programmed", False, "GatewayNotProgrammed", kept),
        ],
    )
    want["requirements"] = REQUIRES_EU
    got = as_dict(run(FunctionRunner(), req))
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == got
    resources = got.pop("desired")["resources"]
    wanted = want.pop("desired")["resources"]
    assert got == want
    assert {k: v for k, v in resources.items() if k in wanted} == wanted
    left = {k: v["resource"] for k, v in resources.items() if k not in wanted}
    assert sorted(left) == sorted(old)
    for key, obj in left.items():
        assert obj["spec"] == old[key]["spec"], key  # as it runs, on the old hub

    # Programmed on the new hub: the old Gateway goes.
    there = {**old, **_ready(on_eu(None))}
    there["gateway@hub-eu"]["status"] = running("203.0.113.20")["gateway"]["status"]
    settled = request(
        moved(gateway(hostname=None, status=status)),
        observed=there,
        required={"inferencecluster": [eu_cluster()]},
    )
    keys = sorted(as_dict(run(FunctionRunner(), settled))["desired"]["resources"])
    assert keys == ["gateway-class@hub-eu", "gateway-namespace@hub-eu", "gateway@hub-eu"]


def test_after_the_move_the_keys_stay_and_a_move_back_uses_plain_keys() -> None:
    # On hub-eu, its Objects observed there: the same keys again, nothing churns.
    there = _ready(on_eu("models.example.com"))
    there["gateway@hub-eu"]["status"] = running("203.0.113.20")["gateway"]["status"]
    req = request(moved(gateway()), observed=there, required={"inferencecluster": [eu_cluster()]})
    keys = sorted(as_dict(run(FunctionRunner(), req))["desired"]["resources"])
    assert keys == ["gateway-class@hub-eu", "gateway-namespace@hub-eu", "gateway@hub-eu"]
    # Back to the first hub: the plain keys are free there, so it uses them, and the
    # Gateway on hub-eu serves until the one back home is programmed.
    back = request(gateway(), observed=there, required={"inferencecluster": [cluster()]})
    want = response(composed(False), None, [VALID, NOT_PROGRAMMED])
    got = as_dict(run(FunctionRunner(), back))["desired"]["resources"]
    assert {k: v for k, v in got.items() if "@" not in k} == want["desired"]["resources"]
    assert sorted(k for k in got if "@" in k) == sorted(there)


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
