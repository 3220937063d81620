"""A Managed cluster with a gateway installs Envoy AI Gateway after Envoy Gateway, and
Envoy Gateway calls it for InferencePool backends once its controller has run."""

from typing import Any

from compose_inference_cluster.fn import FunctionRunner
from compose_inference_cluster.prerequisites import observer_key

from modelplane.core.refs import crd
from modelplane.stack import INFERENCE_POOL_CRD
from modelplane_cli.schema import ManifestValidator
from modelplane_dev.testing import as_dict, request, run

from .test_fn import GPU, H100_POOL, PROVIDER_CONFIG, cluster, inference_class

REQUIRED = {
    "inferenceclass-h100-8x": [inference_class("h100-8x", [GPU])],
    "modelreplicas": [],
    "replica-objects": [],
}


def managed_with_gateway() -> dict[str, Any]:
    obj = cluster([H100_POOL])
    obj["spec"]["gateway"] = {"gatewayClassName": "eg"}
    obj["spec"]["stack"] = {"mode": "Managed"}
    return obj


def call(observed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    req = request(managed_with_gateway(), observed=observed, required=REQUIRED)
    return as_dict(run(FunctionRunner(), req))


def ready(got: dict[str, Any], *names: str) -> dict[str, dict[str, Any]]:
    """What Crossplane observes once the releases `names` (as composed in `got`) run."""
    observed: dict[str, dict[str, Any]] = {"provider-config": PROVIDER_CONFIG}
    for name in names:
        body = got["desired"]["resources"][f"release-{name}"]["resource"]
        observed[f"release-{name}"] = {
            **body,
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }
    return observed


def releases(got: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = got["desired"]["resources"]
    return {
        key.removeprefix("release-"): found[key]["resource"]
        for key in found
        if key.startswith("release-")
    }


def extension(release: dict[str, Any]) -> object:
    return release["spec"]["forProvider"]["values"]["config"]["envoyGateway"].get(
        "extensionManager"
    )


def stack_ready(got: dict[str, Any]) -> dict[str, Any]:
    (found,) = [c for c in got["conditions"] if c["type"] == "StackReady"]
    return found


def test_envoy_ai_gateway_follows_envoy_gateway_and_is_then_called(
    manifest_validator: ManifestValidator,
) -> None:
    first = call({"provider-config": PROVIDER_CONFIG})
    # Envoy Gateway first, without the extension it could not become ready with.
    assert sorted(releases(first)) == ["envoy-gateway", "lws", "node-feature-discovery"]
    assert extension(releases(first)["envoy-gateway"]) is None
    assert stack_ready(first)["message"].startswith(
        "installing: ai-gateway, ai-gateway-crds, envoy-gateway, lws, node-feature-discovery"
    )

    second = call(ready(first, "envoy-gateway", "lws", "node-feature-discovery"))
    assert "ai-gateway-crds" in releases(second)
    assert "ai-gateway" not in releases(second)
    assert "installing: ai-gateway, ai-gateway-crds," in stack_ready(second)["message"]

    third = call(ready(second, "envoy-gateway", "lws", "node-feature-discovery", "ai-gateway-crds"))
    controller = releases(third)["ai-gateway"]
    assert controller["spec"]["forProvider"]["chart"] == {
        "name": "ai-gateway-helm",
        "repository": "oci://docker.io/envoyproxy",
        "version": "v1.1.0",
    }
    assert extension(releases(third)["envoy-gateway"]) is None

    # Its controller ran, but the InferencePool CRD is not seen on the cluster: Envoy
    # Gateway, which watches every extension backend kind, would stop syncing.
    running = ready(third, *releases(third))
    assert extension(releases(call(running))["envoy-gateway"]) is None
    # The CRD seen: Envoy Gateway now hands InferencePool backends to it.
    crd_key = observer_key(crd(INFERENCE_POOL_CRD))
    seen_crd = {"conditions": [{"type": t, "status": "True"} for t in ("Synced", "Ready")]}
    running[crd_key] = {
        **call(running)["desired"]["resources"][crd_key]["resource"],
        "status": seen_crd,
    }
    fourth = call(running)
    envoy = releases(fourth)["envoy-gateway"]
    manager = extension(envoy)
    assert isinstance(manager, dict)
    assert manager["backendResources"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "version": "v1"}
    ]
    assert manager["service"] == {
        "fqdn": {
            "hostname": "ai-gateway-controller.envoy-ai-gateway-system.svc.cluster.local",
            "port": 1063,
        }
    }
    for release in releases(fourth).values():
        assert manifest_validator.validate(release) == [], release["metadata"]["name"]

    # A controller that restarts (its Release not Ready for a while) never takes the
    # extension away from the Envoy Gateway that calls it.
    restarting = {**ready(fourth, *releases(fourth)), crd_key: running[crd_key]}
    restarting["release-ai-gateway"]["status"] = {
        "conditions": [{"type": "Ready", "status": "False"}]
    }
    assert extension(releases(call(restarting))["envoy-gateway"]) == manager
