"""protobuf Struct <-> plain Python, with Kubernetes integers kept as integers.

A protobuf Struct stores every number as a double, so `replicas: 3` comes back as
3.0. Kubernetes has no float fields in the APIs Modelplane reads, and CEL treats
int and double as different types, so integral doubles are turned back into ints.
"""

from typing import Any

from crossplane.function import resource
from google.protobuf import struct_pb2


def restore_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: restore_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [restore_ints(item) for item in value]
    return value


def to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    return restore_ints(resource.struct_to_dict(struct))


def to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    return resource.dict_to_struct(value)
