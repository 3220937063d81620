"""What routes requests to a replica on its cluster, and the URL it is reached at."""

from typing import Any

import pytest

from modelplane.core.kinds import HTTP_ROUTE
from modelplane.traffic.names import hub_hostname
from modelplane.workloads import render_replica
from modelplane_cli.schema import ManifestValidator

from .inputs import read_cluster, read_replica

GATEWAY = {"gatewayClassName": "eg"}


def _render(
    build: Any, backend: str, gateway: bool, address: str | None = "gw.example", **roles: Any
) -> Any:
    cluster = build.cluster(
        backend=backend,
        gateway=GATEWAY if gateway else None,
        gateway_address=address if gateway else None,
    )
    return render_replica(read_replica(build.replica(**roles)), read_cluster(cluster))


@pytest.mark.parametrize(
    ("backend", "gateway", "address", "url"),
    [
        ("Native", False, None, "http://kimi-k2-5ab63.mp-ml-team-prod.svc.cluster.local:8000"),
        (
            "KServe",
            False,
            None,
            "https://kimi-k2-5ab63-kserve-workload-svc.mp-ml-team-prod.svc.cluster.local:8000",
        ),
        ("Native", True, "gw.example", "http://gw.example/mp-ml-team-prod/kimi-k2-5ab63"),
        ("KServe", True, "2001:db8::1", "http://[2001:db8::1]/mp-ml-team-prod/kimi-k2-5ab63"),
        ("Native", True, None, None),
    ],
    ids=[
        "native-service",
        "kserve-service",
        "native-gateway",
        "kserve-gateway-ipv6",
        "no-address-yet",
    ],
)
def test_the_url_a_replica_is_reached_at(
    build: Any, backend: str, gateway: bool, address: str | None, url: str | None
) -> None:
    assert _render(build, backend, gateway, address).url == url


@pytest.mark.parametrize("backend", ["Native", "KServe"])
def test_the_route_serves_the_path_and_the_header_a_hub_sets(build: Any, backend: str) -> None:
    rendered = _render(build, backend, True)
    (route,) = [o for o in rendered.traffic if o.key == "route"]
    assert route.readiness == HTTP_ROUTE.readiness()
    by_path, by_header = route.manifest["spec"]["rules"]
    prefix = "/mp-ml-team-prod/kimi-k2-5ab63"
    assert by_path["matches"] == [{"path": {"type": "PathPrefix", "value": prefix}}]
    assert by_header["matches"][0]["headers"] == [
        {"type": "Exact", "name": "x-modelplane-route", "value": prefix}
    ]
    pool = "kimi-k2-5ab63" if backend == "Native" else "kimi-k2-5ab63-inference-pool"
    assert (
        by_path["backendRefs"]
        == by_header["backendRefs"]
        == [{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool}]
    )
    # On either backend the hub's traffic has a route of its own: every path of the
    # hostname only this replica's hub backends carry, to the same pool.
    (hub,) = [o for o in rendered.traffic if o.key == "hub-route"]
    assert hub.readiness == HTTP_ROUTE.readiness()
    assert hub.manifest["metadata"]["name"] == "kimi-k2-5ab63-hub"
    assert hub.manifest["spec"]["hostnames"] == [hub_hostname(prefix)]
    (rule,) = hub.manifest["spec"]["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert rule["backendRefs"] == by_path["backendRefs"]


def test_kserve_routes_through_the_clusters_gateway_with_its_own_scheduler(build: Any) -> None:
    rendered = _render(build, "KServe", True)
    (workload,) = rendered.workloads
    assert workload.manifest["spec"]["router"] == {
        "gateway": {"refs": [{"name": "modelplane-replicas", "namespace": "modelplane-system"}]},
        "route": {"http": {"refs": [{"name": "kimi-k2-5ab63"}]}},
        "scheduler": {},
    }


def test_the_pool_selects_the_pods_that_answer_and_names_its_picker(build: Any) -> None:
    rendered = _render(
        build,
        "Native",
        True,
        workers=build.role(topology={"tensor": 8, "pipeline": 2}),
    )
    objects = {o.key: o.manifest for o in rendered.traffic}
    pool = objects["inference-pool"]["spec"]
    # Only the leaders answer (a P/D replica's pool: test_disaggregation).
    assert pool["selector"]["matchLabels"] == {
        "modelplane.ai/replica": "kimi-k2-5ab63",
        "modelplane.ai/role": "workers",
        "modelplane.ai/serving": "true",
    }
    assert pool["endpointPickerRef"] == {
        "kind": "Service",
        "name": "kimi-k2-5ab63-epp",
        "port": {"number": 9002},
        "failureMode": "FailOpen",
    }
    picker = objects["picker-deployment"]["spec"]["template"]["spec"]
    assert picker["containers"][0]["args"] == [
        "--pool-name",
        "kimi-k2-5ab63",
        "--zap-encoder",
        "json",
    ]
    assert picker["serviceAccountName"] == "kimi-k2-5ab63-epp"
    # The picker is the platform's: no GPU, no pool pin, no claim.
    assert "nodeSelector" not in picker and "resourceClaims" not in picker


@pytest.mark.parametrize("backend", ["Native", "KServe"])
@pytest.mark.parametrize("gateway", [False, True])
@pytest.mark.parametrize("shape", ["unified", "gang", "disaggregated"])
def test_every_traffic_object_is_valid(
    build: Any, backend: str, gateway: bool, shape: str, manifest_validator: ManifestValidator
) -> None:
    roles = {
        "unified": {"workers": build.role()},
        "gang": {"workers": build.role(topology={"tensor": 8, "pipeline": 2})},
        "disaggregated": {"decode": build.role(), "prefill": build.role()},
    }[shape]
    rendered = _render(build, backend, gateway, **roles)
    for obj in [*rendered.traffic, *(w for w in rendered.workloads)]:
        manifest = obj.manifest
        assert manifest_validator.check(manifest, "1.34").rejected == [], manifest["kind"]
