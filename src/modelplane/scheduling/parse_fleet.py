"""Turn InferenceClusters (plain dicts) into the scheduler's view of the fleet.

Every parser raises `InputError`, a ValueError naming the field path.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.scheduling import fields
from modelplane.scheduling.errors import InputError
from modelplane.scheduling.model import (
    AttributeValue,
    Claim,
    Cluster,
    DeviceSpec,
    Pool,
    PoolHardware,
)

_ATTRIBUTE_KINDS = ("string", "int", "bool", "version")


class Interner:
    """Shares one object per distinct device kind, pool hardware and pool list in a fleet.

    Clusters built from the same class then hold the very same objects, so the
    scheduler's memo tables hit by identity instead of comparing contents.
    """

    def __init__(self) -> None:
        self._devices: dict[DeviceSpec, DeviceSpec] = {}
        self._hardware: dict[PoolHardware, PoolHardware] = {}
        self._layouts: dict[tuple[Pool, ...], tuple[Pool, ...]] = {}

    def device(self, device: DeviceSpec) -> DeviceSpec:
        return self._devices.setdefault(device, device)

    def hardware(self, hardware: PoolHardware) -> PoolHardware:
        return self._hardware.setdefault(hardware, hardware)

    def pools(self, pools: tuple[Pool, ...]) -> tuple[Pool, ...]:
        return self._layouts.setdefault(pools, pools)


def _attribute(value: object, path: str) -> tuple[str, AttributeValue]:
    raw = fields.mapping(value, path)
    present = [kind for kind in _ATTRIBUTE_KINDS if raw.get(kind) is not None]
    if len(present) != 1:
        raise InputError(path, "must have exactly one of string, int, bool or version")
    kind = present[0]
    item = raw[kind]
    if kind == "int":
        return kind, fields.integer(item, f"{path}.int")
    if kind == "bool":
        if not isinstance(item, bool):
            raise InputError(f"{path}.bool", f"must be a boolean, not {item!r}")
        return kind, item
    return kind, fields.string(item, f"{path}.{kind}")


def _quantity(value: object, path: str) -> str:
    # Accept `{value: "80Gi"}` as the API writes it and a bare quantity string.
    if isinstance(value, Mapping):
        return fields.required_string(value, "value", f"{path}.value")  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(fields.integer(value, path)) if float(value).is_integer() else str(value)
    return fields.string(value, path)


def parse_device(value: object, path: str) -> DeviceSpec:
    """An InferenceClass device, as copied into `status.gpuPools[].devices[]`."""
    raw = fields.mapping(value, path)
    claim_text = fields.optional_string(raw, "claim", f"{path}.claim") or Claim.DRA.value
    if claim_text not in (Claim.DRA.value, Claim.SYNTHETIC.value):
        raise InputError(f"{path}.claim", f"must be DRA or Synthetic, not {claim_text!r}")
    claim = Claim(claim_text)
    device_class = fields.optional_string(raw, "deviceClassName", f"{path}.deviceClassName")
    if claim is Claim.DRA and device_class is None:
        raise InputError(f"{path}.deviceClassName", "is required when claim is DRA")
    attributes = fields.optional_mapping(raw, "attributes", path)
    capacity = fields.optional_mapping(raw, "capacity", path)
    return DeviceSpec(
        name=fields.required_string(raw, "name", f"{path}.name"),
        claim=claim,
        driver=fields.required_string(raw, "driver", f"{path}.driver"),
        device_class_name=device_class,
        count=fields.count(raw, "count", f"{path}.count", default=1, minimum=1),
        attributes=tuple(
            sorted(
                (name, *_attribute(item, f"{path}.attributes.{name}"))
                for name, item in attributes.items()
            )
        ),
        capacity=tuple(
            sorted(
                (name, _quantity(item, f"{path}.capacity.{name}"))
                for name, item in capacity.items()
            )
        ),
    )


def parse_pool(value: object, path: str, interner: Interner | None = None) -> Pool:
    interner = interner or Interner()
    raw = fields.mapping(value, path)
    items = fields.optional_sequence(raw, "devices", f"{path}.devices")
    devices = tuple(
        interner.device(parse_device(item, f"{path}.devices[{i}]")) for i, item in enumerate(items)
    )
    return Pool(
        name=fields.required_string(raw, "name", f"{path}.name"),
        class_name=fields.optional_string(raw, "className", f"{path}.className") or "",
        nodes=fields.count(raw, "nodes", f"{path}.nodes", default=0, minimum=0),
        hardware=interner.hardware(PoolHardware(devices)),
    )


def parse_cluster(obj: Mapping[str, Any], interner: Interner | None = None) -> Cluster:
    """An InferenceCluster object (`metadata`, `spec`, `status.gpuPools`)."""
    interner = interner or Interner()
    metadata = fields.optional_mapping(obj, "metadata", "")
    spec = fields.optional_mapping(obj, "spec", "")
    status = fields.optional_mapping(obj, "status", "")
    labels = fields.optional_mapping(metadata, "labels", "metadata")
    scheduling = fields.optional_mapping(spec, "scheduling", "spec")
    raw_allowed = scheduling.get("allowedPriorities")
    allowed = (
        None
        if raw_allowed is None
        else tuple(
            fields.string(v, f"spec.scheduling.allowedPriorities[{i}]")
            for i, v in enumerate(fields.sequence(raw_allowed, "spec.scheduling.allowedPriorities"))
        )
    )
    pools = fields.optional_sequence(status, "gpuPools", "status.gpuPools")
    declared = fields.optional_sequence(spec, "nodePools", "spec.nodePools")
    return Cluster(
        name=fields.required_string(metadata, "name", "metadata.name"),
        labels={k: fields.string(v, f"metadata.labels.{k}") for k, v in sorted(labels.items())},
        pools=interner.pools(
            tuple(parse_pool(p, f"status.gpuPools[{i}]", interner) for i, p in enumerate(pools))
        ),
        default_priority=fields.optional_string(
            scheduling, "defaultPriority", "spec.scheduling.defaultPriority"
        ),
        allowed_priorities=allowed,
        declared_pools=frozenset(
            fields.required_string(
                fields.mapping(p, f"spec.nodePools[{i}]"), "name", f"spec.nodePools[{i}].name"
            )
            for i, p in enumerate(declared)
        ),
    )


def parse_clusters(objs: Iterable[Mapping[str, Any]]) -> list[Cluster]:
    """Every InferenceCluster of a fleet, sharing device objects between equal classes."""
    interner = Interner()
    clusters: list[Cluster] = []
    for i, obj in enumerate(objs):
        try:
            clusters.append(parse_cluster(obj, interner))
        except InputError as error:
            metadata = obj.get("metadata")
            name = metadata.get("name") if isinstance(metadata, Mapping) else None
            which = f"inferenceclusters[{name}]" if isinstance(name, str) else f"clusters[{i}]"
            raise InputError(f"{which}.{error.path}", error.message) from error
    return clusters
