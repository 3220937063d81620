"""Crossing the protobuf boundary: dicts to Structs and back.

A protobuf Struct stores every number as a double, so whatever comes back from a
function has `2.0` where the world had `2`. Kubernetes objects have no
integral-valued floats worth keeping, so the engine turns them back into ints.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from google.protobuf import json_format, struct_pb2

from modelplane.render.world import Obj


def to_struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(dict(value), struct_pb2.Struct())


def from_struct(struct: struct_pb2.Struct) -> Obj:
    value = restore_ints(json_format.MessageToDict(struct))
    return value if isinstance(value, dict) else {}


def restore_ints(value: Any) -> Any:
    """`value` with every integral float turned back into an int, recursively."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: restore_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [restore_ints(v) for v in value]
    return value


def request_tag(request: fnv1.RunFunctionRequest) -> str:
    """What Crossplane puts in meta.tag: a hash of the request without its tag."""
    untagged = fnv1.RunFunctionRequest()
    untagged.CopyFrom(request)
    untagged.meta.tag = ""
    return hashlib.sha256(untagged.SerializeToString(deterministic=True)).hexdigest()


def requirements_fingerprint(response: fnv1.RunFunctionResponse) -> bytes | None:
    """Requirements in a comparable form; None when the response set none at all.

    Crossplane compares successive requirements with proto.Equal, for which an
    unset message differs from a set empty one; None keeps that distinction.
    """
    if not response.HasField("requirements"):
        return None
    return response.requirements.SerializeToString(deterministic=True)
