"""A disaggregated replica on a Native cluster serves P/D with a stock vLLM image.

One Native cluster `edge` with a Gateway runs `split`: one decode worker and one
prefill worker. After `modelplane render`, the decode pods carry llm-d's routing
sidecar (a native sidecar on the serving port, the engine behind it on 8200),
both roles' engines carry vLLM's NIXL KV-transfer config, and the replica's
endpoint picker runs llm-d-inference-scheduler with a prefill and a decode
profile over an InferencePool that selects both roles' serving pods. Every
object is valid against its CRD or the cluster's built-in schema.
"""

import json
from typing import Any

import pytest

from modelplane_cli import yamlio
from modelplane_cli.render import Document
from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, Renderer
from .manifests import IMAGE
from .test_examples import assert_valid

Obj = dict[str, Any]
KV = '--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_both"}'

TEXT = """---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceClass
metadata: {name: h100-8x}
spec:
  devices:
    - name: gpu
      driver: gpu.nvidia.com
      deviceClassName: gpu.nvidia.com
      count: 8
      attributes:
        productName: {string: NVIDIA H100 80GB HBM3}
---
apiVersion: v1
kind: Secret
metadata: {name: edge-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: edge, labels: {kind: edge}}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: edge-kubeconfig, namespace: modelplane-system}}
  gateway: {gatewayClassName: eg}
  nodePools:
    - {name: h100, className: h100-8x, nodeCount: 2}
---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: split, namespace: team-a}
spec:
  replicas: 1
  clusterSelector: {matchLabels: {kind: edge}}
  decode:
    nodeSelector:
      devices: [{name: gpu, count: 8}]
    workers:
      topology: {tensor: 8}
      template:
        spec:
          containers:
            - {name: engine, image: "%(image)s", args: ["--model=Qwen/Qwen3-8B"]}
  prefill:
    nodeSelector:
      devices: [{name: gpu, count: 8}]
    workers:
      topology: {tensor: 8}
      template:
        spec:
          containers:
            - {name: engine, image: "%(image)s", args: ["--model=Qwen/Qwen3-8B"]}
"""


@pytest.fixture(scope="module")
def fleet(renderer: Renderer) -> Fleet:
    text = TEXT % {"image": IMAGE}
    docs = [Document("scenario", o) for o in yamlio.load_all(text) if o is not None]
    rendered = renderer.documents(docs)
    assert rendered.result.ok, rendered.result.errors
    return rendered


def _role_pod(fleet: Fleet, role: str) -> Obj:
    [pod] = [
        d["spec"]["template"]
        for d in fleet.manifests("Deployment")
        if d["metadata"]["labels"].get("modelplane.ai/role") == role
    ]
    return pod


def _engine(pod: Obj) -> Obj:
    [engine] = pod["spec"]["containers"]
    return engine


def test_decode_pods_carry_the_routing_sidecar_before_the_engine(fleet: Fleet) -> None:
    assert fleet.placements("split")[0][1] == "edge"
    decode = _role_pod(fleet, "decode")
    [sidecar] = decode["spec"]["initContainers"]
    assert sidecar["image"] == "ghcr.io/llm-d/llm-d-routing-sidecar:v0.3.0"
    assert sidecar["restartPolicy"] == "Always"
    assert sidecar["args"][:3] == ["--port=8000", "--vllm-port=8200", "--connector=nixlv2"]
    assert sidecar["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    engine = _engine(decode)
    assert engine["args"] == ["--model=Qwen/Qwen3-8B", KV, "--port=8200"]
    assert [p["containerPort"] for p in engine["ports"]] == [8200]
    assert decode["metadata"]["labels"]["llm-d.ai/role"] == "decode"


def test_both_roles_get_the_kv_transfer_config(fleet: Fleet) -> None:
    prefill = _role_pod(fleet, "prefill")
    assert "initContainers" not in prefill["spec"]
    assert _engine(prefill)["args"] == ["--model=Qwen/Qwen3-8B", KV]
    assert [p["containerPort"] for p in _engine(prefill)["ports"]] == [8000]
    assert prefill["metadata"]["labels"]["llm-d.ai/role"] == "prefill"
    assert KV in _engine(_role_pod(fleet, "decode"))["args"]
    # Each engine's NIXL side channel is reached at its own pod, not localhost.
    nixl = {
        "name": "VLLM_NIXL_SIDE_CHANNEL_HOST",
        "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
    }
    for role in ("decode", "prefill"):
        assert nixl in _engine(_role_pod(fleet, role))["env"]


def test_the_picker_runs_a_prefill_and_a_decode_profile(fleet: Fleet) -> None:
    [pool] = fleet.manifests("InferencePool")
    selector = pool["spec"]["selector"]["matchLabels"]
    assert "modelplane.ai/role" not in selector and selector["modelplane.ai/serving"] == "true"
    # The pool's selector takes in both roles' serving pods.
    for role in ("decode", "prefill"):
        labels = _role_pod(fleet, role)["metadata"]["labels"]
        assert selector.items() <= labels.items()
    [picker] = [
        d
        for d in fleet.manifests("Deployment")
        if d["metadata"]["labels"].get("app.kubernetes.io/component") == "endpoint-picker"
    ]
    [epp] = picker["spec"]["template"]["spec"]["containers"]
    assert epp["image"].startswith("ghcr.io/llm-d/llm-d-inference-scheduler:")
    config = json.loads(epp["args"][epp["args"].index("--config-text") + 1])
    assert config["kind"] == "EndpointPickerConfig"
    assert [p["name"] for p in config["schedulingProfiles"]] == ["prefill", "decode"]
    assert [p["type"] for p in config["plugins"]][:4] == [
        "pd-profile-handler",
        "prefill-header-handler",
        "prefill-filter",
        "decode-filter",
    ]


def test_every_object_is_valid(fleet: Fleet, manifest_validator: ManifestValidator) -> None:
    assert_valid(fleet, manifest_validator)
    kinds = ("Deployment", "Service", "InferencePool", "HTTPRoute")
    checked = 0
    for kind in kinds:
        for manifest in fleet.manifests(kind):
            check = manifest_validator.check(manifest)
            assert check.rejected == [] and check.pods == [], (kind, check)
            checked += 1
    assert checked >= 7  # two roles, the picker, two Services and more, the pool, the route
