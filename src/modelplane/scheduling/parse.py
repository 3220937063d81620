"""Turn a ModelDeployment and ModelReplicas (plain dicts) into scheduler inputs.

Every parser raises `InputError`, a ValueError naming the field path. The
parsers check shape, not meaning: a label selector with an unknown operator or a
CEL expression that does not compile parses fine, because reporting those is the
scheduler's job (it must keep existing replicas when they appear).
"""

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.core import vocabulary
from modelplane.scheduling import fields
from modelplane.scheduling.errors import InputError
from modelplane.scheduling.model import (
    DECODE_ROLE,
    PREFILL_ROLE,
    ROLE_NAMES,
    UNIFIED_ROLE,
    ClaimRequest,
    Deployment,
    DeviceRequest,
    ExistingReplica,
    LabelRequirement,
    LabelSelector,
    RecordedRole,
    Role,
    Topology,
)


def parse_label_selector(value: object, path: str) -> LabelSelector:
    """A LabelSelector's shape; operators and label syntax are checked when scheduling."""
    selector = fields.mapping(value, path)
    labels = fields.optional_mapping(selector, "matchLabels", path)
    match_labels = tuple(
        sorted((key, fields.string(v, f"{path}.matchLabels.{key}")) for key, v in labels.items())
    )
    expressions: list[LabelRequirement] = []
    items = fields.optional_sequence(selector, "matchExpressions", f"{path}.matchExpressions")
    for i, raw in enumerate(items):
        item_path = f"{path}.matchExpressions[{i}]"
        item = fields.mapping(raw, item_path)
        values = fields.optional_sequence(item, "values", f"{item_path}.values")
        expressions.append(
            LabelRequirement(
                key=fields.string(item.get("key", ""), f"{item_path}.key"),
                operator=fields.string(item.get("operator", ""), f"{item_path}.operator"),
                values=tuple(
                    fields.string(v, f"{item_path}.values[{j}]") for j, v in enumerate(values)
                ),
            )
        )
    return LabelSelector(match_labels=match_labels, match_expressions=tuple(expressions))


def parse_topology(value: object, path: str) -> Topology:
    raw = {} if value is None else fields.mapping(value, path)
    topology = Topology(
        tensor=fields.count(raw, "tensor", f"{path}.tensor", default=1, minimum=1),
        pipeline=fields.count(raw, "pipeline", f"{path}.pipeline", default=1, minimum=1),
        data=fields.count(raw, "data", f"{path}.data", default=1, minimum=1),
        data_local=fields.count(raw, "dataLocal", f"{path}.dataLocal", default=1, minimum=1),
    )
    if topology.data % topology.data_local:
        # A worker's data-parallel ranks fill whole nodes; a remainder would leave
        # the node count (pipeline * data / dataLocal) fractional.
        raise InputError(
            f"{path}.dataLocal",
            f"must divide data ({topology.data}), not {topology.data_local}",
        )
    return topology


def _parse_requests(value: object, path: str) -> tuple[DeviceRequest, ...]:
    node_selector = fields.mapping(value, path)
    raw_devices = node_selector.get("devices")
    if raw_devices is None:
        raise InputError(f"{path}.devices", "is required")
    devices = fields.sequence(raw_devices, f"{path}.devices")
    if not devices:
        raise InputError(f"{path}.devices", "must name at least one device")
    requests: list[DeviceRequest] = []
    seen: set[str] = set()
    for i, raw in enumerate(devices):
        item_path = f"{path}.devices[{i}]"
        item = fields.mapping(raw, item_path)
        name = fields.required_string(item, "name", f"{item_path}.name")
        if name in seen:
            raise InputError(f"{item_path}.name", f"duplicate device request {name!r}")
        seen.add(name)
        count = fields.count(item, "count", f"{item_path}.count", default=1, minimum=1)
        selectors = fields.cel_selectors(item, item_path)
        requests.append(DeviceRequest(name=name, count=count, selectors=selectors))
    return tuple(requests)


def _parse_role(name: str, node_selector: object, workers: object, path: str) -> Role:
    selector_path = f"{path}.nodeSelector" if path else "nodeSelector"
    workers_path = f"{path}.workers" if path else "workers"
    if node_selector is None:
        raise InputError(selector_path, "is required")
    raw_workers = {} if workers is None else fields.mapping(workers, workers_path)
    return Role(
        name=name,
        requests=_parse_requests(node_selector, selector_path),
        workers=fields.count(raw_workers, "count", f"{workers_path}.count", default=1, minimum=1),
        topology=parse_topology(raw_workers.get("topology"), f"{workers_path}.topology"),
    )


def parse_deployment(obj: Mapping[str, Any]) -> Deployment:
    """A ModelDeployment object (`metadata` and `spec`)."""
    metadata = fields.optional_mapping(obj, "metadata", "")
    spec = fields.optional_mapping(obj, "spec", "")
    name = fields.required_string(metadata, "name", "metadata.name")
    namespace = fields.required_string(metadata, "namespace", "metadata.namespace")
    replicas = fields.count(spec, "replicas", "spec.replicas", default=1, minimum=0)
    disaggregated = DECODE_ROLE in spec or PREFILL_ROLE in spec
    if disaggregated:
        for key in ("nodeSelector", "workers"):
            if key in spec:
                raise InputError(f"spec.{key}", "must not be set with decode and prefill")
        for role in (DECODE_ROLE, PREFILL_ROLE):
            if spec.get(role) is None:
                raise InputError(f"spec.{role}", "is required when the other role is set")
        roles = tuple(
            _parse_role(
                role,
                fields.optional_mapping(spec, role, "spec").get("nodeSelector"),
                fields.optional_mapping(spec, role, "spec").get("workers"),
                f"spec.{role}",
            )
            for role in (DECODE_ROLE, PREFILL_ROLE)
        )
    else:
        roles = (_parse_role(UNIFIED_ROLE, spec.get("nodeSelector"), spec.get("workers"), "spec"),)
    raw_selector = spec.get("clusterSelector")
    return Deployment(
        name=name,
        namespace=namespace,
        replicas=replicas,
        roles=roles,
        priority=fields.optional_string(spec, "priority", "spec.priority"),
        cluster_selector=None
        if raw_selector is None
        else parse_label_selector(raw_selector, "spec.clusterSelector"),
    )


def _claim_request(value: object, path: str) -> ClaimRequest:
    raw = fields.mapping(value, path)
    return ClaimRequest(
        name=fields.required_string(raw, "name", f"{path}.name"),
        device_class_name=fields.required_string(raw, "deviceClassName", f"{path}.deviceClassName"),
        count=fields.count(raw, "count", f"{path}.count", default=1, minimum=1),
        selectors=fields.cel_selectors(raw, path),
    )


def _recorded_role(name: str, value: object, path: str) -> RecordedRole:
    raw = fields.mapping(value, path)
    requests = fields.optional_sequence(raw, "deviceRequests", f"{path}.deviceRequests")
    return RecordedRole(
        name=name,
        pool=fields.optional_string(raw, "nodePoolName", f"{path}.nodePoolName") or "",
        requests=tuple(
            _claim_request(r, f"{path}.deviceRequests[{i}]") for i, r in enumerate(requests)
        ),
        workers=fields.count(raw, "count", f"{path}.count", default=1, minimum=1),
        topology=parse_topology(raw.get("topology"), f"{path}.topology"),
    )


def _index(value: object) -> int | None:
    # A malformed index makes the replica unidentifiable rather than failing the
    # whole fleet's parse: the scheduler drops it and says why. str.isdigit alone
    # admits digits int() refuses ("²"); a huge int is compared, never made a float.
    if isinstance(value, str):
        return int(value) if value.isascii() and value.isdigit() else None
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 0 else None
    if isinstance(value, int):
        return value if value >= 0 else None
    return None


def parse_replica(obj: Mapping[str, Any]) -> ExistingReplica:
    """A ModelReplica object; identity comes from its labels, else from its spec."""
    metadata = fields.optional_mapping(obj, "metadata", "")
    spec = fields.optional_mapping(obj, "spec", "")
    labels = fields.optional_mapping(metadata, "labels", "metadata")
    label_index = _index(labels.get(vocabulary.LABEL_REPLICA_INDEX))
    roles = tuple(
        _recorded_role(role, spec[role], f"spec.{role}")
        for role in ROLE_NAMES
        if spec.get(role) is not None
    )
    deployment = labels.get(vocabulary.LABEL_DEPLOYMENT) or spec.get("deploymentName")
    cluster = labels.get(vocabulary.LABEL_CLUSTER) or spec.get("clusterName")
    return ExistingReplica(
        namespace=fields.optional_string(metadata, "namespace", "metadata.namespace") or "",
        name=fields.required_string(metadata, "name", "metadata.name"),
        deployment=deployment if isinstance(deployment, str) and deployment else None,
        cluster=cluster if isinstance(cluster, str) and cluster else None,
        index=label_index if label_index is not None else _index(spec.get("index")),
        roles=roles,
    )


def parse_replicas(objs: Iterable[Mapping[str, Any]]) -> list[ExistingReplica]:
    replicas: list[ExistingReplica] = []
    for i, obj in enumerate(objs):
        try:
            replicas.append(parse_replica(obj))
        except InputError as error:
            raise InputError(f"replicas[{i}].{error.path}", error.message) from error
    return replicas
