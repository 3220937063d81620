"""A Native disaggregated replica is routed by llm-d: the routing sidecar on decode,
NIXL KV transfer on both roles, a P/D profile in its picker."""

import json
from typing import Any

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.workloads import render_replica
from modelplane_cli.schema import ManifestValidator

from .inputs import read_cluster, read_replica

Obj = dict[str, Any]
KV = '--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}'
MODEL_ARG = "--model=Qwen/Qwen2.5-0.5B-Instruct"
NIXL_HOST = {
    "name": "VLLM_NIXL_SIDE_CHANNEL_HOST",
    "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
}
SIDECAR = {
    "name": "routing-sidecar",
    "image": "ghcr.io/llm-d/llm-d-routing-sidecar:v0.3.0",
    "restartPolicy": "Always",
    "args": ["--port=8000", "--vllm-port=8200", "--connector=nixlv2", "--secure-proxy=false"],
    "ports": [{"name": "http", "containerPort": 8000, "protocol": "TCP"}],
}


def _render(build: Any, *, backend: str = "Native", picker: Obj | None = None, **roles: Any) -> Any:
    gateway: Obj = {"gatewayClassName": "eg"}
    if picker is not None:
        gateway["endpointPicker"] = picker
    cluster = build.cluster(backend=backend, gateway=gateway, gateway_address="gw.example")
    roles = roles or {"decode": build.role(), "prefill": build.role()}
    return render_replica(read_replica(build.replica(**roles)), read_cluster(cluster))


def _pods(rendered: Any) -> dict[str, list[Obj]]:
    """Each role's pod templates (a LeaderWorkerSet: leader then worker)."""
    pods: dict[str, list[Obj]] = {}
    for workload in rendered.workloads:
        spec = workload.manifest["spec"]
        if "template" in spec:
            pods[workload.role] = [spec["template"]]
        else:
            lws = spec["leaderWorkerTemplate"]
            pods[workload.role] = [lws["leaderTemplate"], lws["workerTemplate"]]
    return pods


def _engine(pod: Obj) -> Obj:
    (engine,) = [c for c in pod["spec"]["containers"] if c["name"] == "engine"]
    return engine


def test_decode_pods_carry_the_sidecar_and_both_roles_the_kv_config(build: Any) -> None:
    pods = _pods(_render(build))
    (decode,), (prefill,) = pods["decode"], pods["prefill"]
    assert decode["spec"]["initContainers"] == [SIDECAR]
    assert _engine(decode)["args"] == [MODEL_ARG, KV, "--port=8200"]
    assert _engine(decode)["ports"] == [
        {"name": "engine", "containerPort": 8200, "protocol": "TCP"}
    ]
    assert _engine(decode)["readinessProbe"]["httpGet"]["port"] == 8200
    assert "initContainers" not in prefill["spec"]
    assert _engine(prefill)["args"] == [MODEL_ARG, KV]
    assert _engine(prefill)["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert decode["metadata"]["labels"]["llm-d.ai/role"] == "decode"
    assert prefill["metadata"]["labels"]["llm-d.ai/role"] == "prefill"
    for pod in (decode, prefill):
        assert NIXL_HOST in _engine(pod)["env"]


def test_a_decode_gang_routes_through_its_leader_only(build: Any) -> None:
    gang = build.role(topology={"tensor": 8, "pipeline": 2})
    leader, worker = _pods(_render(build, decode=gang, prefill=build.role()))["decode"]
    assert leader["spec"]["initContainers"] == [SIDECAR]
    assert _engine(leader)["args"] == [MODEL_ARG, KV, "--port=8200"]
    # A follower neither answers requests nor parses the API server's flags.
    assert "initContainers" not in worker["spec"]
    assert _engine(worker)["args"] == [MODEL_ARG]
    # Every rank is reached at its own pod for KV transfer.
    assert NIXL_HOST in _engine(leader)["env"] and NIXL_HOST in _engine(worker)["env"]


@pytest.mark.parametrize(
    ("backend", "disaggregated"),
    [("Native", False), ("KServe", True), ("KServe", False)],
    ids=["native-unified", "kserve-pd", "kserve-unified"],
)
def test_only_a_native_pd_replica_is_routed_by_llm_d(
    build: Any, backend: str, disaggregated: bool
) -> None:
    roles = (
        {"decode": build.role(), "prefill": build.role()}
        if disaggregated
        else {"workers": build.role()}
    )
    text = json.dumps([w.manifest for w in _render(build, backend=backend, **roles).workloads])
    assert "routing-sidecar" not in text
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" not in text
    assert "kv-transfer-config" not in text
    assert "llm-d.ai/role" not in text


def test_the_pool_spans_both_roles_and_the_picker_runs_both_profiles(build: Any) -> None:
    objects = {o.key: o.manifest for o in _render(build).traffic}
    assert objects["inference-pool"]["spec"]["selector"]["matchLabels"] == {
        "modelplane.ai/replica": "kimi-k2-5ab63",
        "modelplane.ai/serving": "true",
    }
    assert objects["inference-pool"]["spec"]["targetPorts"] == [{"number": 8000}]
    # Behind the sidecar the serving port belongs to an init container: by number.
    assert objects["service"]["spec"]["ports"][0]["targetPort"] == 8000
    assert objects["service-prefill"]["spec"]["ports"][0]["targetPort"] == "http"
    (epp,) = objects["picker-deployment"]["spec"]["template"]["spec"]["containers"]
    assert epp["image"] == "ghcr.io/llm-d/llm-d-inference-scheduler:v0.3.2"
    assert epp["args"][:4] == ["--pool-name", "kimi-k2-5ab63", "--zap-encoder", "json"]
    assert epp["args"][4] == "--config-text"
    config = json.loads(epp["args"][5])
    assert config["apiVersion"] == "inference.networking.x-k8s.io/v1alpha1"
    assert config["kind"] == "EndpointPickerConfig"
    types = {p["type"] for p in config["plugins"]}
    assert {
        "pd-profile-handler",
        "prefill-header-handler",
        "prefill-filter",
        "decode-filter",
    } <= types
    profiles = {
        p["name"]: [r["pluginRef"] for r in p["plugins"]] for p in config["schedulingProfiles"]
    }
    assert set(profiles) == {"prefill", "decode"}
    assert profiles["prefill"][0] == "prefill-filter" and profiles["decode"][0] == "decode-filter"
    # Every reference names a declared plugin.
    assert {ref for refs in profiles.values() for ref in refs} <= types


def test_a_platform_picker_image_is_kept(build: Any) -> None:
    picker = {"image": "registry.example/llm-d-inference-scheduler:v0.3.2-patched"}
    objects = {o.key: o.manifest for o in _render(build, picker=picker).traffic}
    (epp,) = objects["picker-deployment"]["spec"]["template"]["spec"]["containers"]
    assert epp["image"] == picker["image"]


@pytest.mark.parametrize(
    ("role_name", "extra", "path"),
    [
        (
            "decode",
            {"args": [MODEL_ARG, "--port=9000"]},
            "spec.decode.template.spec.containers[0].args[1]",
        ),
        (
            "prefill",
            {"args": ["--kv-transfer-config", "{}"]},
            "spec.prefill.template.spec.containers[0].args[0]",
        ),
    ],
    ids=["port", "kv-config"],
)
def test_flags_the_renderer_owns_are_refused(
    build: Any, role_name: str, extra: Obj, path: str
) -> None:
    template = {"spec": {"containers": [build.engine(**extra)]}}
    roles = {"decode": build.role(), "prefill": build.role()}
    roles[role_name] = build.role(template=template)
    with pytest.raises(InvalidInputError) as raised:
        _render(build, **roles)
    assert [issue.path for issue in raised.value.issues] == [path]


def test_a_decode_engine_declaring_the_serving_port_is_refused(build: Any) -> None:
    ports = [{"name": "http", "containerPort": 8000}]
    template = {"spec": {"containers": [build.engine(ports=ports)]}}
    with pytest.raises(InvalidInputError) as raised:
        _render(build, decode=build.role(template=template), prefill=build.role())
    assert [i.path for i in raised.value.issues] == [
        "spec.decode.template.spec.containers[0].ports[0]"
    ]


def test_a_template_setting_the_nixl_host_is_refused(build: Any) -> None:
    env = [{"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", "value": "localhost"}]
    template = {"spec": {"containers": [build.engine(env=env)]}}
    with pytest.raises(InvalidInputError) as raised:
        _render(build, decode=build.role(), prefill=build.role(template=template))
    assert [i.path for i in raised.value.issues] == [
        "spec.prefill.template.spec.containers[0].env[0].name"
    ]


def test_a_template_container_named_like_the_sidecar_is_refused(build: Any) -> None:
    init = {"name": "routing-sidecar", "image": "busybox", "restartPolicy": "Always"}
    template = {"spec": {"containers": [build.engine()], "initContainers": [init]}}
    with pytest.raises(InvalidInputError) as raised:
        _render(build, decode=build.role(template=template), prefill=build.role())
    assert [i.path for i in raised.value.issues] == [
        "spec.decode.template.spec.initContainers[0].name"
    ]


@pytest.mark.parametrize("gang", [False, True], ids=["deployment", "leader-worker-set"])
def test_every_routed_object_is_valid(
    build: Any, gang: bool, manifest_validator: ManifestValidator
) -> None:
    decode = build.role(topology={"tensor": 8, "pipeline": 2}) if gang else build.role()
    rendered = _render(build, decode=decode, prefill=build.role())
    for obj in [*rendered.traffic, *rendered.workloads]:
        result = manifest_validator.check(obj.manifest, "1.34")
        assert result.rejected == [], obj.manifest["kind"]
