"""Prefill/decode routing of a disaggregated replica on a Native cluster (llm-d's way).

A Native replica with both a decode and a prefill role serves disaggregated with a
stock vLLM image and no engine changes, provided the image has `NixlConnector`
(vLLM 0.9.0 or later) and the NIXL library (vllm/vllm-openai:v0.20.1, which the
examples use, has both; the image is not checked):

- every serving engine of either role gets vLLM's NIXL KV-transfer config as a
  trailing argument (`kv_both`: each engine can send and receive KV blocks), and
  every engine its pod IP as the NIXL side-channel host;
- each decode pod runs llm-d's routing sidecar as a native sidecar (an init
  container with `restartPolicy: Always`) on the serving port; the engine moves
  behind it to `DECODE_ENGINE_PORT` (the renderer appends `--port`). The sidecar
  sends the prompt to the prefill pod the picker named in the
  `x-prefiller-host-port` header, then lets the local engine decode;
- the replica's endpoint picker runs llm-d-inference-scheduler with a `prefill`
  and a `decode` scheduling profile, which tell the pods apart by llm-d's role
  label (`ROLE_LABEL`); its InferencePool selects both roles' serving pods.

Sources: llm-d/llm-d-routing-sidecar v0.3.0 (flags `-port`, `-vllm-port`,
`-connector=nixlv2`, `-secure-proxy`), llm-d/llm-d-inference-scheduler
(`pkg/plugins/filter`: the `llm-d.ai/role` label, values prefill/decode/both).
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from modelplane_models.inference_cluster import BackendType

from modelplane.core.issues import InvalidInputError
from modelplane.core.vocabulary import ROLE_DECODE, ROLE_PREFILL

from .model import ClusterInput, ReplicaInput

# llm-d release 0.3's sidecar, and the scheduler build of the same release line.
SIDECAR_IMAGE: Final = "ghcr.io/llm-d/llm-d-routing-sidecar:v0.3.0"
SCHEDULER_IMAGE: Final = "ghcr.io/llm-d/llm-d-inference-scheduler:v0.3.2"
SIDECAR_CONTAINER: Final = "routing-sidecar"
# Where a decode engine listens behind the sidecar (llm-d's own charts use 8200).
DECODE_ENGINE_PORT: Final = 8200
DECODE_ENGINE_PORT_NAME: Final = "engine"
ROLE_LABEL: Final = "llm-d.ai/role"
KV_TRANSFER_FLAG: Final = "--kv-transfer-config"
KV_TRANSFER_CONFIG: Final = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
PORT_FLAG: Final = "--port"
# Where an engine's NIXL side channel is reached: vLLM defaults to localhost, which
# a peer engine in another pod cannot reach.
NIXL_HOST_ENV: Final = "VLLM_NIXL_SIDE_CHANNEL_HOST"
# Flags the renderer sets on a routed engine; a template setting them is refused.
OWNED_FLAGS: Final = (KV_TRANSFER_FLAG, PORT_FLAG)
CONFIG_FLAG: Final = "--config-text"


def routed(replica: ReplicaInput, cluster: ClusterInput) -> bool:
    """A Native replica with both roles: the only shape this routing applies to.
    KServe wires P/D itself (LLMInferenceService `spec.prefill`)."""
    return cluster.backend is BackendType.NATIVE and replica.disaggregated


def _flag(arg: object) -> str | None:
    if not isinstance(arg, str):
        return None
    return arg.split("=", 1)[0]


def engine_args(args: Sequence[Any], path: str, role: str) -> list[Any]:
    """The engine's args with what the role topology needs appended: the KV-transfer
    config on both roles, and the port behind the sidecar on decode."""
    for i, arg in enumerate(args):
        if _flag(arg) in OWNED_FLAGS:
            raise InvalidInputError.at(
                f"{path}[{i}]",
                f"{_flag(arg)} is set by Modelplane on a disaggregated replica's engines",
            )
    added = [f"{KV_TRANSFER_FLAG}={KV_TRANSFER_CONFIG}"]
    if role == ROLE_DECODE:
        added.append(f"{PORT_FLAG}={DECODE_ENGINE_PORT}")
    return [*args, *added]


def nixl_host_env() -> dict[str, Any]:
    """The engine's NIXL side-channel host: its own pod IP, set on every pod of both
    roles (each rank that holds KV blocks is reached at its own pod)."""
    return {"name": NIXL_HOST_ENV, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def routing_sidecar(serving_port: int, port_name: str) -> dict[str, Any]:
    """The decode pod's routing sidecar: a native sidecar on the serving port.
    `--secure-proxy=false`: the gateway reaches pods over plain HTTP, as it reaches
    every other Modelplane engine."""
    return {
        "name": SIDECAR_CONTAINER,
        "image": SIDECAR_IMAGE,
        "restartPolicy": "Always",
        "args": [
            f"--port={serving_port}",
            f"--vllm-port={DECODE_ENGINE_PORT}",
            "--connector=nixlv2",
            "--secure-proxy=false",
        ],
        "ports": [{"name": port_name, "containerPort": serving_port, "protocol": "TCP"}],
    }


def check_sidecar_name(names: Sequence[object], path: str) -> None:
    if SIDECAR_CONTAINER in names:
        at = list(names).index(SIDECAR_CONTAINER)
        raise InvalidInputError.at(
            f"{path}[{at}].name", f"{SIDECAR_CONTAINER!r} is the routing sidecar Modelplane adds"
        )


def check_sidecar_port(ports: Sequence[Any], path: str, serving_port: int, name: str) -> None:
    """Behind the routing sidecar the serving port is the sidecar's, not the engine's."""
    for i, port in enumerate(ports):
        if not isinstance(port, Mapping):
            continue
        entry = cast(Mapping[str, Any], port)
        if entry.get("containerPort") == serving_port or entry.get("name") == name:
            raise InvalidInputError.at(
                f"{path}[{i}]",
                f"port {serving_port} ({name!r}) is the routing sidecar's on a disaggregated "
                f"replica's decode pods; the engine serves on {DECODE_ENGINE_PORT}",
            )


def picker_config() -> dict[str, Any]:
    """llm-d-inference-scheduler's EndpointPickerConfig with a prefill and a decode
    profile. `pd-profile-handler` runs the decode profile, then the prefill one
    (threshold 0: every request is disaggregated), `prefill-header-handler` names
    the chosen prefill pod to the decode pod's sidecar; each profile filters by
    role, scores by prefix-cache affinity and queue depth (as llm-d's own P/D
    samples) and picks the best."""
    profiles = [
        {
            "name": name,
            "plugins": [
                {"pluginRef": f"{name}-filter"},
                {"pluginRef": "prefix-cache-scorer", "weight": 2},
                {"pluginRef": "queue-scorer", "weight": 1},
                {"pluginRef": "max-score-picker"},
            ],
        }
        for name in (ROLE_PREFILL, ROLE_DECODE)
    ]
    return {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": [
            {"type": "pd-profile-handler", "parameters": {"threshold": 0}},
            {"type": "prefill-header-handler"},
            {"type": "prefill-filter"},
            {"type": "decode-filter"},
            {"type": "prefix-cache-scorer"},
            {"type": "queue-scorer"},
            {"type": "max-score-picker"},
        ],
        "schedulingProfiles": profiles,
    }


def picker_args() -> list[str]:
    """The picker's config, inline: JSON is YAML, and one arg keeps the picker one
    Deployment with nothing else to compose."""
    return [CONFIG_FLAG, json.dumps(picker_config(), separators=(",", ":"))]
