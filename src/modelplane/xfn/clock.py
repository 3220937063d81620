"""What time a function takes as now.

A function that judges how long something has lasted reads now from the request
context (`modelplane.ai/now`, RFC 3339) when the caller fixes it: the render
engine does, so a preview is the same on every run. Crossplane sets no such key,
and a live control plane's now is the wall clock.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from datetime import UTC, datetime

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.vocabulary import CONTEXT_NOW
from modelplane.fleet.health import parse_time


def now(req: fnv1.RunFunctionRequest) -> datetime:
    """The request's fixed now, else the wall clock."""
    value = req.context.fields.get(CONTEXT_NOW)
    fixed = parse_time(value.string_value) if value is not None else None
    return fixed if fixed is not None else datetime.now(UTC)
