"""Which fetched InferenceClusters say they are unreachable, read from their Structs.

Every call carries the whole fleet, and the generated model has no conditions, so
the `Reachable` condition is read here straight from each protobuf Struct, with no
conversion to plain data, once per object's bytes (`required.read_each`). It
answers exactly what
`modelplane.scheduling.unreachable_clusters` answers for the same objects as plain
data: a named cluster whose first `Reachable` condition has status "False".
"""

from collections.abc import Mapping
from typing import Any

from crossplane.function.proto.v1.run_function_pb2 import RunFunctionRequest
from google.protobuf.struct_pb2 import Struct, Value

from modelplane.core.vocabulary import REACHABLE
from modelplane.xfn.memo import BoundedMemo
from modelplane.xfn.required import Required, read_each

# Each read cluster's name when its Reachable condition is False, by its digest.
_UNREACHABLE: BoundedMemo[bytes, tuple[str | None]] = BoundedMemo()


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
        if fields is not None and _string(fields.get("type")) == REACHABLE:
            return _string(fields.get("status"))
    return None


def _unreachable_name(obj: Struct) -> str | None:
    if _healthy_status(obj) != "False":
        return None
    metadata = _fields(obj.fields.get("metadata"))
    return _string(metadata.get("name")) if metadata is not None else None


def unreachable_cluster_names(
    req: RunFunctionRequest, name: str, clusters: Required[Any]
) -> frozenset[str]:
    """Names of the clusters `clusters` (the fetched list `name`) whose `Reachable`
    condition is False; unknown is reachable."""
    return frozenset(
        found
        for found in read_each(req, name, clusters, _unreachable_name, _UNREACHABLE)
        if found is not None
    )
