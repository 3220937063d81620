"""protobuf Struct <-> plain Python, with Kubernetes integers kept as integers.

A protobuf Struct stores every number as a double, so `replicas: 3` comes back as
3.0. Kubernetes has no float fields in the APIs Modelplane reads, and CEL treats
int and double as different types, so integral doubles are turned back into ints
(`to_dict`). An object read into a generated model needs no such pass
(`to_values`): the model turns each integral number into the int its schema
declares, and a number inside a field the schema leaves open (a pod template) is
carried through to another Struct, where an int and a double are the same.
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
    return restore_ints(to_values(struct))


def to_values(struct: struct_pb2.Struct) -> dict[str, Any]:
    """The Struct as plain Python, every number a float: for reading into a model."""
    return resource.struct_to_dict(struct)


def to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    return resource.dict_to_struct(value)
