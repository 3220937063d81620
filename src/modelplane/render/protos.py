"""Crossing the protobuf boundary: the engine's objects to Structs, and what Crossplane hashes.

Structs coming back from a function are read with `modelplane.xfn.structs.to_dict`,
the functions' own reader, which turns the doubles a Struct stores back into ints.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from google.protobuf import json_format, struct_pb2


def to_struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(dict(value), struct_pb2.Struct())


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
