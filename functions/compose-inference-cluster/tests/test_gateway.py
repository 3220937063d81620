"""An InferenceCluster with spec.gateway composes its Gateway and publishes its address."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane.core import naming
from modelplane_cli.schema import ManifestValidator
from modelplane_dev.testing import as_dict, request, run

from .test_fn import GPU, H100_POOL, PROVIDER_CONFIG, cluster, inference_class

# Everything the cluster asks for, fetched (no replicas, no Objects of theirs).
CLASSES = {
    "inferenceclass-h100-8x": [inference_class("h100-8x", [GPU])],
    "modelreplicas": [],
    "replica-objects": [],
}
GATEWAY_KEYS = ["gateway", "gateway-namespace"]


def with_gateway(status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj = cluster([H100_POOL], status=status)
    obj["spec"]["gateway"] = {"gatewayClassName": "eg"}
    return obj


def applied(address: str | None) -> dict[str, dict[str, Any]]:
    """What Crossplane observes once the Gateway is programmed (at `address`)."""
    got = as_dict(run(FunctionRunner(), request(with_gateway(), required=CLASSES)))
    observed: dict[str, dict[str, Any]] = {"provider-config": PROVIDER_CONFIG}
    for key in GATEWAY_KEYS:
        obj = got["desired"]["resources"][key]["resource"]
        manifest = dict(obj["spec"]["forProvider"]["manifest"])
        manifest["status"] = {"conditions": [{"type": "Programmed", "status": "True"}]}
        if address:
            manifest["status"]["addresses"] = [{"type": "Hostname", "value": address}]
        observed[key] = {
            **obj,
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "atProvider": {"manifest": manifest},
            },
        }
    return observed


def test_the_gateway_is_composed_and_valid(manifest_validator: ManifestValidator) -> None:
    got = as_dict(run(FunctionRunner(), request(with_gateway(), required=CLASSES)))
    resources = got["desired"]["resources"]
    assert {"gateway", "gateway-namespace", "provider-config"} <= set(resources)
    # The stack observes what the traffic path needs there (the Gateway API and
    # Inference Extension CRDs, the GatewayClass).
    observed = {k for k in resources if k.startswith("observe-")}
    assert "observe-customresourcedefinition-inferencepools.inference.networking.k8s.io" in observed
    # Beside the cluster's other Objects, in its kubeconfig Secret's namespace.
    gateway = resources["gateway"]["resource"]
    assert gateway["metadata"] == {
        "name": naming.hashed_name(
            "prod-us-east-gateway", "InferenceCluster", "prod-us-east", "gateway"
        ),
        "namespace": "modelplane-system",
    }
    manifest = gateway["spec"]["forProvider"]["manifest"]
    assert (manifest["metadata"]["name"], manifest["metadata"]["namespace"]) == (
        "modelplane-replicas",
        "modelplane-system",
    )
    assert manifest["spec"]["gatewayClassName"] == "eg"
    assert resources["gateway-namespace"]["resource"]["spec"]["managementPolicies"] == [
        "Observe",
        "Create",
        "Update",
        "LateInitialize",
    ]
    for key in GATEWAY_KEYS:
        assert manifest_validator.validate(resources[key]["resource"]) == []
        assert resources[key]["ready"] == "READY_FALSE"
    # Not reporting an address yet: the gateway is named, with no address.
    assert got["desired"]["composite"]["resource"]["status"]["gateway"] == {
        "name": "modelplane-replicas",
        "namespace": "modelplane-system",
    }


@pytest.mark.parametrize(
    ("published", "reported", "address"),
    [
        pytest.param(None, "gw.east.example", "gw.east.example", id="reported"),
        pytest.param("gw.old.example", None, "gw.old.example", id="kept while none is reported"),
        pytest.param("gw.old.example", "gw.new.example", "gw.new.example", id="a new one wins"),
    ],
)
def test_the_address_the_gateway_reports_is_published(
    published: str | None, reported: str | None, address: str
) -> None:
    status = {"gateway": {"address": published}} if published else None
    req = request(with_gateway(status), observed=applied(reported), required=CLASSES)
    got = as_dict(run(FunctionRunner(), req))
    assert got["desired"]["composite"]["resource"]["status"]["gateway"] == {
        "name": "modelplane-replicas",
        "namespace": "modelplane-system",
        "address": address,
    }
    assert all(got["desired"]["resources"][k]["ready"] == "READY_TRUE" for k in GATEWAY_KEYS)


def test_a_cluster_that_does_not_read_keeps_its_gateway_and_its_address() -> None:
    status = {
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "prod-us-east"},
        "gateway": {
            "name": "modelplane-replicas",
            "namespace": "modelplane-system",
            "address": "gw",
        },
    }
    broken = with_gateway(status)
    broken["spec"]["gateway"]["gatewayClassName"] = 7
    got = as_dict(run(FunctionRunner(), request(broken, observed=applied("gw"), required=CLASSES)))
    assert {"gateway", "gateway-namespace", "provider-config"} <= set(got["desired"]["resources"])
    assert got["desired"]["composite"]["resource"]["status"]["gateway"] == status["gateway"]
    assert got["conditions"][0]["reason"] == "InvalidSpec"
