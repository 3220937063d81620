"""Shape the ML team's pod template into a serving pod on its pinned pool.

The engine container's image, command, args and env pass through untouched.
Modelplane adds only what it owns: the pool pin, the node-taint tolerations, the DRA
claim, its identity labels, the engine port and readiness probe on pods that
answer requests, and the node-rank contract below. Fields Modelplane or the
scheduler conventions set are refused in the template rather than merged, so
nobody's intent is silently dropped.

The node-rank contract (every engine container, every backend):

- MODELPLANE_NODE_RANK: this pod's rank in its worker, 0 on the leader. On a
  LeaderWorkerSet it expands LWS_WORKER_INDEX, which LWS prepends to every
  container's env; on a single-node worker it is "0".
- MODELPLANE_NODE_COUNT: nodes per worker (pipeline * data / dataLocal).
- MODELPLANE_LEADER_ADDRESS: where rank 0 listens. It expands LWS_LEADER_ADDRESS
  (the leader's stable DNS name) on a gang, or is the pod's own IP otherwise.

When the deployment declares `spec.model`, every engine container also gets
MODELPLANE_MODEL_NAME (the served name clients ask for; pass it to the engine,
for vLLM as --served-model-name=$(MODELPLANE_MODEL_NAME)) and, when given,
MODELPLANE_MODEL_URI. A disaggregated replica's decode engines on a Native
cluster get MODELPLANE_PREFILL_ADDRESS: the DNS name of the Service in front of
its prefill engines (port 8000), since requests enter at decode.

They come before the team's own env, so the team's entries may reference them
as $(MODELPLANE_NODE_RANK) and so on.
"""

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from modelplane.core import labels as label_syntax
from modelplane.core.issues import InvalidInputError
from modelplane.core.node_taints import NodeTaint, tolerations
from modelplane.core.vocabulary import LABEL_POOL, LABEL_SERVING, ROLE_DECODE

from .claims import POD_CLAIM_NAME
from .compute_domains import CHANNEL_CLAIM_NAME
from .disaggregation import (
    DECODE_ENGINE_PORT,
    DECODE_ENGINE_PORT_NAME,
    NIXL_HOST_ENV,
    ROLE_LABEL,
    check_sidecar_name,
    check_sidecar_port,
    engine_args,
    nixl_host_env,
    routing_sidecar,
)
from .identity import identity_labels
from .model import ReplicaInput, RoleInput
from .owned_fields import as_mapping, check_container, check_pod_spec

ENGINE_CONTAINER = "engine"
ENGINE_PORT = 8000
ENGINE_PORT_NAME = "http"
HEALTH_PATH = "/health"
SERVING_VALUE = "true"

ENV_NODE_RANK = "MODELPLANE_NODE_RANK"
ENV_NODE_COUNT = "MODELPLANE_NODE_COUNT"
ENV_LEADER_ADDRESS = "MODELPLANE_LEADER_ADDRESS"
ENV_MODEL_NAME = "MODELPLANE_MODEL_NAME"
ENV_MODEL_URI = "MODELPLANE_MODEL_URI"
ENV_PREFILL_ADDRESS = "MODELPLANE_PREFILL_ADDRESS"
ENV_MODEL_PATH = "MODELPLANE_MODEL_PATH"
# A model cache's volume on a Native cluster: mounted read-only, the weights in model/.
CACHE_VOLUME = "modelplane-model-cache"
CACHE_MOUNT_PATH = "/mnt/model-cache"
CACHE_MODEL_PATH = f"{CACHE_MOUNT_PATH}/model"
CONTRACT_ENV = (
    ENV_NODE_RANK,
    ENV_NODE_COUNT,
    ENV_LEADER_ADDRESS,
    ENV_MODEL_NAME,
    ENV_MODEL_URI,
    ENV_PREFILL_ADDRESS,
    ENV_MODEL_PATH,
)


@dataclass(frozen=True)
class PodShape:
    """What Modelplane adds to one pod template of one role."""

    labels: Mapping[str, str] = field(hash=False)
    pool: str
    claim_template: str | None
    # The pool's node taints the pods tolerate (the class's nodeTaints, when claiming).
    tolerations: tuple[NodeTaint, ...]
    nodes: int
    # The pod answers requests itself: gets the engine port, a readiness probe
    # and the serving label. Gang followers and KServe pods (KServe owns ports
    # and probes) do not.
    serving: bool
    container_name: str = ENGINE_CONTAINER
    # The engine contract's variables beyond rank and leader: model and prefill.
    env: tuple[tuple[str, str], ...] = ()
    # The model cache's claim, mounted read-only (Native clusters).
    cache_claim: str | None = None
    # The IMEX channel template of the role's ComputeDomain (multi-node NVLink).
    channel_template: str | None = None
    # The role of a Native disaggregated replica routed by llm-d (`disaggregation`):
    # prefill or decode; None otherwise.
    pd_role: str | None = None


def role_shape(
    replica: ReplicaInput,
    role: RoleInput,
    claim: str | None,
    *,
    serving: bool,
    container_name: str = ENGINE_CONTAINER,
    prefill_address: str | None = None,
    mount_cache: bool = False,
    channel: str | None = None,
    pd_routed: bool = False,
) -> PodShape:
    """The shape of a role's pods: its identity labels, pool, claim and node count.
    `mount_cache`: the pods mount the replica's model cache themselves (Native);
    `pd_routed`: the replica's prefill/decode routing is llm-d's (`disaggregation`)."""
    env: list[tuple[str, str]] = []
    model = replica.model
    cache = model.cache if model is not None else None
    if model is not None:
        env.append((ENV_MODEL_NAME, model.name))
        uri = cache.uri if cache is not None else model.uri
        if uri:
            env.append((ENV_MODEL_URI, uri))
    cache_claim = cache.claim if cache is not None and mount_cache else None
    if cache_claim is not None:
        env.append((ENV_MODEL_PATH, CACHE_MODEL_PATH))
    if prefill_address:
        env.append((ENV_PREFILL_ADDRESS, prefill_address))
    return PodShape(
        labels=identity_labels(replica, role.placed.role),
        pool=role.placed.pool,
        claim_template=claim,
        tolerations=role.placed.tolerations,
        nodes=role.placed.topology.nodes_per_worker,
        serving=serving,
        container_name=container_name,
        env=tuple(env),
        cache_claim=cache_claim,
        channel_template=channel,
        pd_role=role.placed.role if pd_routed else None,
    )


def _as_list(value: object, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInputError.at(path, "must be a list")
    return cast(list[Any], value)


def _string_map(raw: object, path: str, *, values_are_labels: bool) -> dict[str, str]:
    checked: dict[str, str] = {}
    # By key, so the key a message names is the same whatever order the map arrived
    # in (upb walks a Struct's map in another order in every process).
    given = as_mapping(raw if raw is not None else {}, path)
    for key, value in sorted(given.items(), key=lambda item: str(item[0])):
        where = f"{path}[{key}]"
        if not isinstance(value, str):
            raise InvalidInputError.at(where, "must be a string")
        problem = label_syntax.key_error(str(key))
        if problem is None and values_are_labels:
            problem = label_syntax.value_error(value)
        if problem:
            raise InvalidInputError.at(where, problem)
        checked[str(key)] = value
    return checked


def _engine_index(containers: list[Any], path: str, container_name: str) -> int:
    names = [as_mapping(c, f"{path}[{i}]").get("name") for i, c in enumerate(containers)]
    engines = [i for i, name in enumerate(names) if name == ENGINE_CONTAINER]
    if len(engines) != 1:
        raise InvalidInputError.at(
            path,
            f"must hold exactly one container named {ENGINE_CONTAINER!r}, found {len(engines)}",
        )
    if container_name != ENGINE_CONTAINER and container_name in names:
        raise InvalidInputError.at(
            f"{path}[{names.index(container_name)}].name",
            f"{container_name!r} is the name the backend gives the engine container",
        )
    return engines[0]


def _contract_env(nodes: int) -> list[dict[str, Any]]:
    if nodes == 1:
        return [
            {"name": ENV_NODE_RANK, "value": "0"},
            {"name": ENV_NODE_COUNT, "value": "1"},
            {"name": ENV_LEADER_ADDRESS, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        ]
    return [
        {"name": ENV_NODE_RANK, "value": "$(LWS_WORKER_INDEX)"},
        {"name": ENV_NODE_COUNT, "value": str(nodes)},
        {"name": ENV_LEADER_ADDRESS, "value": "$(LWS_LEADER_ADDRESS)"},
    ]


def _serving_port(ports: list[Any], path: str, port: int, port_name: str) -> list[Any]:
    for i, declared in enumerate(ports):
        entry = as_mapping(declared, f"{path}[{i}]")
        if entry.get("containerPort") == port:
            return ports
        if entry.get("name") == port_name:
            raise InvalidInputError.at(
                f"{path}[{i}].containerPort",
                f"the engine serves on port {port}; port {port_name!r} must be {port}",
            )
    return [*ports, {"name": port_name, "containerPort": port, "protocol": "TCP"}]


def _behind_sidecar(shape: PodShape) -> bool:
    """A decode pod that answers requests through llm-d's routing sidecar."""
    return shape.serving and shape.pd_role == ROLE_DECODE


def _engine(container: Mapping[str, Any], path: str, shape: PodShape) -> dict[str, Any]:
    engine = copy.deepcopy(dict(container))
    env = _as_list(engine.get("env"), f"{path}.env")
    for i, entry in enumerate(env):
        name = as_mapping(entry, f"{path}.env[{i}]").get("name")
        if name in CONTRACT_ENV or (shape.pd_role is not None and name == NIXL_HOST_ENV):
            raise InvalidInputError.at(f"{path}.env[{i}].name", f"{name} is set by Modelplane")
    engine["name"] = shape.container_name
    declared = [{"name": name, "value": value} for name, value in shape.env]
    if shape.pd_role is not None:
        declared.append(nixl_host_env())
    engine["env"] = [*_contract_env(shape.nodes), *declared, *env]
    claims = [
        {"name": name}
        for name, template in (
            (POD_CLAIM_NAME, shape.claim_template),
            (CHANNEL_CLAIM_NAME, shape.channel_template),
        )
        if template is not None
    ]
    if claims:
        resources = dict(as_mapping(engine.get("resources") or {}, f"{path}.resources"))
        resources["claims"] = claims
        engine["resources"] = resources
    if shape.cache_claim is not None:
        mounts = _as_list(engine.get("volumeMounts"), f"{path}.volumeMounts")
        engine["volumeMounts"] = [
            *mounts,
            {"name": CACHE_VOLUME, "mountPath": CACHE_MOUNT_PATH, "readOnly": True},
        ]
    if shape.serving and shape.pd_role is not None:
        # Followers' engines take the config from the leader's (vLLM over Ray).
        engine["args"] = engine_args(
            _as_list(engine.get("args"), f"{path}.args"), f"{path}.args", shape.pd_role
        )
    if shape.serving:
        ports = f"{path}.ports"
        port, port_name = ENGINE_PORT, ENGINE_PORT_NAME
        declared = _as_list(engine.get("ports"), ports)
        if _behind_sidecar(shape):
            port, port_name = DECODE_ENGINE_PORT, DECODE_ENGINE_PORT_NAME
            check_sidecar_port(declared, ports, ENGINE_PORT, ENGINE_PORT_NAME)
        engine["ports"] = _serving_port(declared, ports, port, port_name)
        # Readiness only: a liveness probe would kill an engine still loading
        # weights. The team's own probe, if any, knows its engine better.
        engine.setdefault(
            "readinessProbe",
            {
                "httpGet": {"path": HEALTH_PATH, "port": port},
                "periodSeconds": 10,
                "timeoutSeconds": 5,
                "failureThreshold": 3,
            },
        )
    return engine


def shape_pod(template: Mapping[str, Any], path: str, shape: PodShape) -> dict[str, Any]:
    """A PodTemplateSpec for one pod of a role; `path` locates `template` in the replica."""
    metadata = as_mapping(template.get("metadata") or {}, f"{path}.metadata")
    spec = copy.deepcopy(dict(as_mapping(template.get("spec"), f"{path}.spec")))
    check_pod_spec(spec, f"{path}.spec")

    containers = _as_list(spec.get("containers"), f"{path}.spec.containers")
    engine_at = _engine_index(containers, f"{path}.spec.containers", shape.container_name)
    for section in ("initContainers", "containers"):
        for i, container in enumerate(_as_list(spec.get(section), f"{path}.spec.{section}")):
            where = f"{path}.spec.{section}[{i}]"
            check_container(as_mapping(container, where), where)
    containers[engine_at] = _engine(
        containers[engine_at], f"{path}.spec.containers[{engine_at}]", shape
    )
    spec["containers"] = containers
    if _behind_sidecar(shape):
        inits = f"{path}.spec.initContainers"
        init_containers = _as_list(spec.get("initContainers"), inits)
        names = [as_mapping(c, f"{inits}[{i}]").get("name") for i, c in enumerate(init_containers)]
        check_sidecar_name(names, inits)
        check_sidecar_name([c.get("name") for c in containers], f"{path}.spec.containers")
        sidecar = routing_sidecar(ENGINE_PORT, ENGINE_PORT_NAME)
        spec["initContainers"] = [*init_containers, sidecar]

    if shape.cache_claim is not None:
        volumes = _as_list(spec.get("volumes"), f"{path}.spec.volumes")
        for i, volume in enumerate(volumes):
            if as_mapping(volume, f"{path}.spec.volumes[{i}]").get("name") == CACHE_VOLUME:
                raise InvalidInputError.at(
                    f"{path}.spec.volumes[{i}].name", f"{CACHE_VOLUME} is set by Modelplane"
                )
        claim = {"claimName": shape.cache_claim, "readOnly": True}
        spec["volumes"] = [*volumes, {"name": CACHE_VOLUME, "persistentVolumeClaim": claim}]
    spec["nodeSelector"] = {LABEL_POOL: shape.pool}
    if shape.tolerations:
        spec["tolerations"] = tolerations(shape.tolerations)
    pod_claims = [
        {"name": name, "resourceClaimTemplateName": template}
        for name, template in (
            (POD_CLAIM_NAME, shape.claim_template),
            (CHANNEL_CLAIM_NAME, shape.channel_template),
        )
        if template is not None
    ]
    if pod_claims:
        spec["resourceClaims"] = pod_claims

    labels = _string_map(metadata.get("labels"), f"{path}.metadata.labels", values_are_labels=True)
    # Modelplane's keys win: they are how its own selectors and routing find pods,
    # and only Modelplane may say a pod serves (a gang follower must never).
    labels.pop(LABEL_SERVING, None)
    labels.update(shape.labels)
    if shape.pd_role is not None:
        labels[ROLE_LABEL] = shape.pd_role
    if shape.serving:
        labels[LABEL_SERVING] = SERVING_VALUE
    pod_metadata: dict[str, Any] = {"labels": dict(sorted(labels.items()))}
    annotations = _string_map(
        metadata.get("annotations"), f"{path}.metadata.annotations", values_are_labels=False
    )
    if annotations:
        pod_metadata["annotations"] = dict(sorted(annotations.items()))
    return {"metadata": pod_metadata, "spec": spec}


def check_pool(pool: str, path: str) -> None:
    """The pool name becomes a nodeSelector value, so it must be a label value."""
    problem = label_syntax.value_error(pool)
    if problem or not pool:
        raise InvalidInputError.at(
            path, f"{pool!r} is used as a node label value and {problem or 'is empty'}"
        )
