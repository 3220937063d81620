"""Build RunFunctionRequests and run functions, in-process or over real gRPC.

Tooling, not runtime: each function's tests, and anyone writing a new function,
drive functions through this the same way Crossplane does.
"""

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format

from modelplane.core.numbers import restore_ints
from modelplane.xfn.structs import to_struct


def request(
    composite: dict[str, Any],
    *,
    observed: Mapping[str, dict[str, Any]] | None = None,
    required: Mapping[str, Sequence[dict[str, Any]]] | None = None,
    tag: str = "test",
) -> fnv1.RunFunctionRequest:
    """A request as Crossplane sends it. `required` maps requirement names to what
    Crossplane found; a name left out has not been resolved yet."""
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=tag))
    req.observed.composite.resource.CopyFrom(to_struct(composite))
    for key, obj in (observed or {}).items():
        req.observed.resources[key].resource.CopyFrom(to_struct(obj))
    for name, items in (required or {}).items():
        resources = req.required_resources[name]
        for item in items:
            resources.items.add().resource.CopyFrom(to_struct(item))
    return req


def run(
    runner: grpcv1.FunctionRunnerServiceServicer, req: fnv1.RunFunctionRequest
) -> fnv1.RunFunctionResponse:
    return asyncio.run(runner.RunFunction(req, None))  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def serving(
    runner: grpcv1.FunctionRunnerServiceServicer,
) -> AsyncGenerator[grpcv1.FunctionRunnerServiceStub]:
    """`runner` served on an ephemeral loopback port, and a stub calling it through a
    real channel; the server stops when the block ends."""
    server = grpc.aio.server()
    grpcv1.add_FunctionRunnerServiceServicer_to_server(runner, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield grpcv1.FunctionRunnerServiceStub(channel)
    finally:
        await server.stop(grace=None)


def run_over_grpc(
    runner: grpcv1.FunctionRunnerServiceServicer, req: fnv1.RunFunctionRequest
) -> fnv1.RunFunctionResponse:
    """Serve `runner` on an ephemeral loopback port and call it through a real channel."""

    async def call() -> fnv1.RunFunctionResponse:
        async with serving(runner) as stub:
            return await stub.RunFunction(req, timeout=30)

    return asyncio.run(call())


def as_dict(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    """A response as plain data with integers restored, for whole-response comparison."""
    return restore_ints(json_format.MessageToDict(rsp))


def requirements_only(resources: dict[str, Any]) -> dict[str, Any]:
    """The whole response (as `as_dict` gives it) to a call that lacks a required key:
    its requirements and context, nothing composed, since Crossplane's fetch loop never
    keeps it (design/required-resources.md)."""
    return {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {},
        "context": {},
        "requirements": {"resources": resources},
    }
