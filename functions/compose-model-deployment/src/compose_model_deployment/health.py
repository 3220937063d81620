"""Which fetched InferenceClusters say they are unhealthy, read from their Structs.

Every call carries the whole fleet, and the generated model has no conditions, so
the `Healthy` condition is read here straight from each protobuf Struct, with no
conversion to plain data, once per object's bytes (keyed by the digest `required`
took of them). It answers exactly what
`modelplane.scheduling.unhealthy_clusters` answers for the same objects as plain
data: a named cluster whose first `Healthy` condition has status "False".
"""

from collections.abc import Iterable, Mapping

from google.protobuf.struct_pb2 import Struct, Value

from modelplane.core.vocabulary import HEALTHY
from modelplane.xfn.memo import BoundedMemo

# Each read cluster's name when its Healthy condition is False, by its digest.
_UNHEALTHY: BoundedMemo[bytes, tuple[str | None]] = BoundedMemo()


def _string(value: Value | None) -> str | None:
    if value is None or value.WhichOneof("kind") != "string_value":
        return None
    return value.string_value


def _fields(value: Value | None) -> Mapping[str, Value] | None:
    if value is None or value.WhichOneof("kind") != "struct_value":
        return None
    return value.struct_value.fields


def _healthy_status(obj: Struct) -> str | None:
    status = _fields(obj.fields.get("status"))
    conditions = status.get("conditions") if status is not None else None
    if conditions is None or conditions.WhichOneof("kind") != "list_value":
        return None
    for entry in conditions.list_value.values:
        fields = _fields(entry)
        if fields is not None and _string(fields.get("type")) == HEALTHY:
            return _string(fields.get("status"))
    return None


def _unhealthy_name(obj: Struct) -> str | None:
    if _healthy_status(obj) != "False":
        return None
    metadata = _fields(obj.fields.get("metadata"))
    return _string(metadata.get("name")) if metadata is not None else None


def unhealthy_cluster_names(objects: Iterable[tuple[bytes, Struct]]) -> frozenset[str]:
    """Names of the clusters whose `Healthy` condition is False; unknown is healthy.
    Each object comes with its digest (`modelplane.xfn.memo.digest`)."""
    found: set[str] = set()
    for key, obj in objects:
        read = _UNHEALTHY.get(key)
        if read is None:
            read = (_unhealthy_name(obj),)
            _UNHEALTHY.put(key, read)
        (name,) = read
        if name is not None:
            found.add(name)
    return frozenset(found)
