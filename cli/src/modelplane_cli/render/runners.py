"""Finding composition functions and calling them, over loopback gRPC or in-process.

A function is found by its `functionRef.name` among the `modelplane.functions`
entry points, so a new function needs no change here. Over gRPC each function is
served on 127.0.0.1 with an ephemeral port, on the engine's own event loop, and
called through a real channel: the same bytes Crossplane would send. In-process
calls await the runner directly. A runner that takes a request as its bytes
(`ComposeFunction.run_serialized`) gets the bytes the engine assembled, either
way; any other gets a message parsed from them. Either way a runner can neither
see nor change the engine's own objects, which keeps both modes' output identical.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any, Protocol, cast

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import crossplane.function.proto.v1.run_function_pb2_grpc as grpcv1
import grpc

ENTRY_POINT_GROUP = "modelplane.functions"
_LOOPBACK = "127.0.0.1"
_STOP_GRACE_SECONDS = 1.0
_SERVICE = fnv1.DESCRIPTOR.services_by_name["FunctionRunnerService"]
# The method Crossplane calls: /apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction.
RUN_FUNCTION_METHOD = f"/{_SERVICE.full_name}/RunFunction"
_RunFunction = grpc.aio.UnaryUnaryMultiCallable
# Whole fleets travel in one request; gRPC's 4 MiB default is too small for them.
_MAX_MESSAGE_BYTES = 256 * 1024 * 1024
_GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
]


class Runner(Protocol):
    """What a composition function is: an object with an async RunFunction."""

    async def RunFunction(  # noqa: N802 - the gRPC method name
        self, request: fnv1.RunFunctionRequest, context: Any, /
    ) -> fnv1.RunFunctionResponse: ...


class SerializedRunner(Runner, Protocol):
    """A runner that also takes a request as its bytes (`ComposeFunction.run_serialized`)."""

    async def run_serialized(
        self, data: bytes, /, *, deterministic: bool = ...
    ) -> fnv1.RunFunctionResponse: ...


def _serialized(runner: Runner) -> SerializedRunner | None:
    return (
        cast(SerializedRunner, runner)
        if inspect.iscoroutinefunction(getattr(runner, "run_serialized", None))
        else None
    )


class FunctionNotFoundError(Exception):
    """No installed or injected function has this name."""


class FunctionCallError(Exception):
    """A function call failed; formatted as Crossplane reports a gRPC error."""

    def __init__(self, code: str, details: str) -> None:
        super().__init__(f"rpc error: code = {code} desc = {details}")
        self.code = code
        self.details = details


def _go_code_name(code: grpc.StatusCode) -> str:
    # Go's codes.Code prints CamelCase ("DeadlineExceeded"); Python's is UPPER_SNAKE.
    return "".join(part.capitalize() for part in code.name.split("_"))


class FunctionRegistry:
    """Runner instances by function name: injected ones first, then entry points."""

    def __init__(self, injected: Mapping[str, Runner] | None = None) -> None:
        self._runners: dict[str, Runner] = dict(injected or {})

    def runner(self, name: str) -> Runner:
        found = self._runners.get(name)
        if found is None:
            found = self._load(name)
            self._runners[name] = found
        return found

    @staticmethod
    def _load(name: str) -> Runner:
        matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
        if not matches:
            raise FunctionNotFoundError(
                f"function {name!r} is not installed (no {ENTRY_POINT_GROUP!r} entry point)"
            )
        try:
            runner_class = matches[0].load()
            runner = runner_class()
        except Exception as exc:  # an entry point may name a module that fails to import
            raise FunctionNotFoundError(
                f"function {name!r} cannot be loaded from {matches[0].value}: {exc}"
            ) from exc
        if not inspect.iscoroutinefunction(getattr(runner, "RunFunction", None)):
            raise FunctionNotFoundError(
                f"function {name!r} ({matches[0].value}) has no async RunFunction method"
            )
        return runner


class FunctionClient(Protocol):
    """How the engine calls functions; `close` releases whatever serving them took."""

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        """Call function `name` with a serialized RunFunctionRequest. Raises
        FunctionNotFoundError or FunctionCallError."""
        ...

    async def close(self) -> None: ...


class InProcessFunctions:
    """Calls each runner directly, with no server in between: with the request's bytes
    where it takes them (`run_serialized`), else its RunFunction with the parsed request."""

    def __init__(self, registry: FunctionRegistry) -> None:
        self._registry = registry

    async def close(self) -> None:
        """Nothing to release: no server or channel was opened."""

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        runner = self._registry.runner(name)
        serialized = _serialized(runner)
        try:
            if serialized is not None:
                # The engine's requests are deterministic (`wire`).
                response = await serialized.run_serialized(request, deterministic=True)
            else:
                response = await runner.RunFunction(
                    fnv1.RunFunctionRequest.FromString(request), None
                )
        except Exception as exc:  # a function's failure is reported, never fatal to the engine
            # The same words grpc.aio's server puts in the status of an unhandled exception.
            raise FunctionCallError("Unknown", f"Unexpected {type(exc)}: {exc}") from exc
        returned = cast(object, response)
        if not isinstance(returned, fnv1.RunFunctionResponse):
            raise FunctionCallError(
                "Unknown", f"function returned {type(returned).__name__}, not RunFunctionResponse"
            )
        return fnv1.RunFunctionResponse.FromString(response.SerializeToString())


class GrpcFunctions:
    """Serves each function on loopback the first time it is needed and calls it over gRPC."""

    def __init__(self, registry: FunctionRegistry) -> None:
        self._registry = registry
        self._servers: list[grpc.aio.Server] = []
        self._channels: list[grpc.aio.Channel] = []
        self._methods: dict[str, _RunFunction] = {}

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()
        # A graceful stop says goodbye with HTTP/2's NO_ERROR; stopping with no grace
        # cancels calls with an error code that gRPC core logs to stderr from the client
        # side. A render ends with no call in flight, so the grace is not waited out.
        await asyncio.gather(*(server.stop(grace=_STOP_GRACE_SECONDS) for server in self._servers))
        self._channels.clear()
        self._servers.clear()
        self._methods.clear()

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        method = self._methods.get(name) or await self._serve(name)
        try:
            response: fnv1.RunFunctionResponse = await method(request)
        except grpc.aio.AioRpcError as exc:
            raise FunctionCallError(_go_code_name(exc.code()), exc.details() or "") from exc
        return response

    async def _serve(self, name: str) -> _RunFunction:
        runner = self._registry.runner(name)
        server = grpc.aio.server(options=_GRPC_OPTIONS)
        serialized = _serialized(runner)
        if serialized is None:
            grpcv1.add_FunctionRunnerServiceServicer_to_server(runner, server)
        else:
            server.add_generic_rpc_handlers((_bytes_handler(serialized),))
        port = server.add_insecure_port(f"{_LOOPBACK}:0")
        await server.start()
        self._servers.append(server)
        channel = grpc.aio.insecure_channel(f"{_LOOPBACK}:{port}", options=_GRPC_OPTIONS)
        self._channels.append(channel)
        # Requests go out as the bytes the engine assembled (`wire`), not serialized again.
        method: _RunFunction = channel.unary_unary(
            RUN_FUNCTION_METHOD,
            request_serializer=None,
            response_deserializer=fnv1.RunFunctionResponse.FromString,
        )
        self._methods[name] = method
        return method


def _bytes_handler(runner: SerializedRunner) -> grpc.GenericRpcHandler:
    """The FunctionRunnerService, handing the runner each request as it arrived."""

    async def run_function(request: bytes, _context: object) -> fnv1.RunFunctionResponse:
        # The engine's requests are deterministic (`wire`).
        return await runner.run_serialized(request, deterministic=True)

    return grpc.method_handlers_generic_handler(
        _SERVICE.full_name,
        {
            "RunFunction": grpc.unary_unary_rpc_method_handler(
                run_function,
                request_deserializer=None,
                response_serializer=fnv1.RunFunctionResponse.SerializeToString,
            )
        },
    )
