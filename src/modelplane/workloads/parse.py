"""Turn observed ModelReplica and InferenceCluster objects into typed inputs.

Every failure names the field path at fault, so the glue can report it on the
replica's conditions without guessing.
"""

import copy
import re
from collections.abc import Mapping
from typing import Any, cast

from modelplane.core import naming
from modelplane.core.issues import InvalidInputError

from .model import (
    DEFAULT_KUBERNETES_VERSION,
    Backend,
    ClusterInput,
    DeviceRequest,
    ReplicaInput,
    Role,
    RoleInput,
    Topology,
)

_VERSION = re.compile(r"^v?(1)\.(\d+)(?:\.\d+)?$")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _mapping(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInputError.at(path, "must be an object")
    return cast(Mapping[str, Any], value)


def _optional_mapping(parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = parent.get(key)
    return {} if value is None else _mapping(value, _join(path, key))


def _string(parent: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> str:
    value = parent.get(key)
    if value is None or value == "":
        if required:
            raise InvalidInputError.at(f"{path}.{key}", "is required")
        return ""
    if not isinstance(value, str):
        raise InvalidInputError.at(f"{path}.{key}", "must be a string")
    return value


def _integer(parent: Mapping[str, Any], key: str, path: str, *, default: int, minimum: int) -> int:
    value = parent.get(key, default)
    # bool is an int in Python but never a count in an API object.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError.at(f"{path}.{key}", "must be an integer")
    if value < minimum:
        raise InvalidInputError.at(f"{path}.{key}", f"must be at least {minimum}, not {value}")
    return value


def _list(parent: Mapping[str, Any], key: str, path: str) -> list[Any]:
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInputError.at(f"{path}.{key}", "must be a list")
    return cast(list[Any], value)


def _topology(role: Mapping[str, Any], path: str) -> Topology:
    raw = _optional_mapping(role, "topology", path)
    where = f"{path}.topology"
    topology = Topology(
        tensor=_integer(raw, "tensor", where, default=1, minimum=1),
        pipeline=_integer(raw, "pipeline", where, default=1, minimum=1),
        data=_integer(raw, "data", where, default=1, minimum=1),
        data_local=_integer(raw, "dataLocal", where, default=1, minimum=1),
    )
    if topology.data % topology.data_local:
        raise InvalidInputError.at(
            f"{where}.dataLocal",
            f"must divide data ({topology.data}): a node holds a whole number of "
            f"data-parallel ranks, not {topology.data}/{topology.data_local}",
        )
    return topology


def _device_request(raw: object, path: str) -> DeviceRequest:
    request = _mapping(raw, path)
    name = _string(request, "name", path)
    if not naming.is_dns_label(name):
        raise InvalidInputError.at(
            f"{path}.name", f"{name!r} must be a DNS label (a DRA request name)"
        )
    device_class = _string(request, "deviceClassName", path)
    if not naming.is_dns_subdomain(device_class):
        raise InvalidInputError.at(
            f"{path}.deviceClassName", f"{device_class!r} must be a DNS subdomain"
        )
    selectors: list[str] = []
    for i, selector in enumerate(_list(request, "selectors", path)):
        where = f"{path}.selectors[{i}]"
        selectors.append(_string(_mapping(selector, where), "cel", where))
    return DeviceRequest(
        name=name,
        device_class_name=device_class,
        count=_integer(request, "count", path, default=1, minimum=1),
        selectors=tuple(selectors),
    )


def _role(spec: Mapping[str, Any], role: Role) -> RoleInput:
    path = f"spec.{role}"
    raw = _mapping(spec.get(role), path)
    template = _mapping(raw.get("template"), f"{path}.template")
    requests = tuple(
        _device_request(item, f"{path}.deviceRequests[{i}]")
        for i, item in enumerate(_list(raw, "deviceRequests", path))
    )
    seen: set[str] = set()
    for i, request in enumerate(requests):
        if request.name in seen:
            raise InvalidInputError.at(
                f"{path}.deviceRequests[{i}].name", f"duplicate request name {request.name!r}"
            )
        seen.add(request.name)
    return RoleInput(
        role=role,
        count=_integer(raw, "count", path, default=1, minimum=1),
        topology=_topology(raw, path),
        # A private deep copy: rendering must never alias the caller's object.
        template=copy.deepcopy(dict(template)),
        node_pool_name=_string(raw, "nodePoolName", path),
        device_requests=requests,
    )


def parse_replica(obj: Mapping[str, Any]) -> ReplicaInput:
    """Parse an observed ModelReplica; raises InvalidInputError naming the bad field."""
    metadata = _mapping(obj.get("metadata"), "metadata")
    spec = _mapping(obj.get("spec"), "spec")
    unified = spec.get("workers") is not None
    split = [role for role in ("decode", "prefill") if spec.get(role) is not None]
    if unified and split:
        raise InvalidInputError.at(f"spec.{split[0]}", "must not be set together with spec.workers")
    if not unified and len(split) != 2:
        missing = {"decode": "prefill", "prefill": "decode"}[split[0]] if split else "workers"
        raise InvalidInputError.at(
            f"spec.{missing}", "is required: a replica is unified (workers) or decode and prefill"
        )
    priority = _string(spec, "priority", "spec", required=False)
    return ReplicaInput(
        namespace=_string(metadata, "namespace", "metadata"),
        name=_string(metadata, "name", "metadata"),
        deployment_name=_string(spec, "deploymentName", "spec"),
        cluster_name=_string(spec, "clusterName", "spec"),
        priority=priority or None,
        workers=_role(spec, "workers") if unified else None,
        decode=None if unified else _role(spec, "decode"),
        prefill=None if unified else _role(spec, "prefill"),
    )


def _kubernetes_version(obj: Mapping[str, Any]) -> str:
    # The observed version wins over the requested one: it is what is running.
    for section in ("status", "spec"):
        raw = _optional_mapping(obj, section, "")
        value = raw.get("kubernetesVersion")
        if value is None or value == "":
            continue
        where = f"{section}.kubernetesVersion"
        match = _VERSION.match(str(value))
        if not match:
            raise InvalidInputError.at(where, f"{value!r} must look like 1.<minor>")
        return f"{match.group(1)}.{int(match.group(2))}"
    return DEFAULT_KUBERNETES_VERSION


def parse_cluster(obj: Mapping[str, Any]) -> ClusterInput:
    """Parse an InferenceCluster; raises InvalidInputError naming the bad field."""
    metadata = _mapping(obj.get("metadata"), "metadata")
    spec = _optional_mapping(obj, "spec", "")
    backend_raw = _optional_mapping(spec, "backend", "spec")
    backend_type = _string(backend_raw, "type", "spec.backend", required=False) or "Native"
    try:
        backend = Backend(backend_type)
    except ValueError:
        known = ", ".join(b.value for b in Backend)
        raise InvalidInputError.at(
            "spec.backend.type", f"{backend_type!r} is not one of {known}"
        ) from None
    pools: list[str] = []
    for i, pool in enumerate(_list(spec, "nodePools", "spec")):
        pools.append(
            _string(_mapping(pool, f"spec.nodePools[{i}]"), "name", f"spec.nodePools[{i}]")
        )
    return ClusterInput(
        name=_string(metadata, "name", "metadata"),
        backend=backend,
        pools=tuple(sorted(set(pools))),
        kubernetes_version=_kubernetes_version(obj),
    )
