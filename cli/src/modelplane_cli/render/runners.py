"""Finding composition functions and calling them, over loopback gRPC or in-process.

A function is found by its `functionRef.name` among the `modelplane.functions`
entry points, so a new function needs no change here. Over gRPC each function is
served on 127.0.0.1 with an ephemeral port and called through a real channel: the
same bytes Crossplane would send. In-process calls go to the runner directly. A
runner with a synchronous entry for a request's bytes
(`ComposeFunction.run_function_serialized`) gets the bytes the engine assembled,
either way; any other gets a message parsed from them. Either way a runner can
neither see nor change the engine's own objects, which keeps both modes' output
identical.

The engine has one call in flight at a time (its reconciler works through a queue),
so the transport is gRPC's synchronous one: the engine's coroutine blocks in the
channel's call, and the server's handler thread runs the compose itself. The asyncio
server and channel on the engine's loop, with each compose in `asyncio.to_thread`,
cost about twice the CPU per call and several more thread hand-offs
(design/render-performance.md, "Loopback gRPC").
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from concurrent import futures
from importlib.metadata import entry_points
from typing import Any, Protocol, cast

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import grpc
from google.protobuf.message import DecodeError

from modelplane_cli.render.affinity import OneCpu

ENTRY_POINT_GROUP = "modelplane.functions"
_LOOPBACK = "127.0.0.1"
_STOP_GRACE_SECONDS = 1.0
_SERVICE = fnv1.DESCRIPTOR.services_by_name["FunctionRunnerService"]
# The method Crossplane calls: /apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction.
RUN_FUNCTION_METHOD = f"/{_SERVICE.full_name}/RunFunction"
_RunFunction = grpc.UnaryUnaryMultiCallable
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


class BytesRunner(Runner, Protocol):
    """A runner that also composes, synchronously, from a request's bytes
    (`ComposeFunction.run_function_serialized`)."""

    def run_function_serialized(
        self, data: bytes, deterministic: bool = ..., /
    ) -> fnv1.RunFunctionResponse: ...


def _bytes_runner(runner: Runner) -> BytesRunner | None:
    entry = getattr(runner, "run_function_serialized", None)
    if callable(entry) and not inspect.iscoroutinefunction(entry):
        return cast(BytesRunner, runner)
    return None


class _Registering(Protocol):
    """`grpc.Server.add_registered_method_handlers` (grpcio 1.62 on), which the type
    stubs do not have yet."""

    def add_registered_method_handlers(
        self, service_name: str, method_handlers: Mapping[str, grpc.RpcMethodHandler], /
    ) -> None: ...


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


def _unexpected(exc: Exception) -> str:
    # The words the SDK's grpc.aio server puts in the status of an unhandled exception.
    return f"Unexpected {type(exc)}: {exc}"


def _decoded(data: bytes) -> fnv1.RunFunctionResponse:
    """A function's answer from its bytes, alike in both modes. Python's protobuf parser
    (upb) stops at a nesting depth of 100 where Crossplane's Go one reads 10,000: an
    answer nested past that is a failed call, since the render cannot follow it."""
    try:
        return fnv1.RunFunctionResponse.FromString(data)
    except DecodeError as exc:
        raise FunctionCallError(
            "Internal",
            # Not the parser's own words: they differ by protobuf implementation.
            "the response cannot be decoded: it nests deeper than the render's protobuf "
            "parser reads (100 levels); Crossplane's Go parser would read it",
        ) from exc


def _checked(response: object) -> fnv1.RunFunctionResponse:
    if not isinstance(response, fnv1.RunFunctionResponse):
        raise FunctionCallError(
            "Unknown", f"function returned {type(response).__name__}, not RunFunctionResponse"
        )
    return response


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
    """Calls each runner directly, with no server in between: its synchronous entry
    with the request's bytes where it has one, else its RunFunction with the parsed
    request. The answer is copied through its bytes, as a gRPC answer would be, so the
    engine never holds an object the runner built (and might keep)."""

    def __init__(self, registry: FunctionRegistry) -> None:
        self._registry = registry

    async def close(self) -> None:
        """Nothing to release: no server or channel was opened."""

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        runner = self._registry.runner(name)
        direct = _bytes_runner(runner)
        try:
            if direct is not None:
                # On the engine's thread: it waits for this answer and for nothing else.
                # The engine's requests are deterministic (`wire`).
                response = direct.run_function_serialized(request, True)
            else:
                response = await runner.RunFunction(
                    fnv1.RunFunctionRequest.FromString(request), None
                )
        except Exception as exc:  # a function's failure is reported, never fatal to the engine
            raise FunctionCallError("Unknown", _unexpected(exc)) from exc
        return _decoded(_checked(response).SerializeToString())


class GrpcFunctions:
    """Serves each function on loopback the first time it is needed and calls it over
    gRPC, with the synchronous server and channel (see the module docstring). From the
    first server on until `close`, the calling thread and the threads started for the
    servers and channels stay on one CPU (`affinity`)."""

    def __init__(self, registry: FunctionRegistry) -> None:
        self._registry = registry
        self._cpu = OneCpu()
        # One handler thread serves every function: the engine makes one call at a time.
        self._pool = futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="function")
        self._servers: list[grpc.Server] = []
        self._channels: list[grpc.Channel] = []
        self._methods: dict[str, _RunFunction] = {}

    async def close(self) -> None:
        try:
            for channel in self._channels:
                channel.close()
            # A graceful stop says goodbye with HTTP/2's NO_ERROR; stopping with no
            # grace cancels calls with an error code that gRPC core logs to stderr from
            # the client side. A render ends with no call in flight, so the grace is
            # not waited out.
            for stopped in [server.stop(grace=_STOP_GRACE_SECONDS) for server in self._servers]:
                stopped.wait()
            self._pool.shutdown()
            self._channels.clear()
            self._servers.clear()
            self._methods.clear()
        finally:
            # The caller's CPUs come back even when stopping fails (an interrupt).
            self._cpu.release()

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        method = self._methods.get(name) or self._serve(name)
        try:
            # Blocks the engine's loop until the answer is back: the engine has nothing
            # else to do meanwhile, and a hop to another thread would cost more than the
            # call's own transport.
            answer: bytes = method(request)
        except grpc.RpcError as exc:
            failed = cast(grpc.Call, exc)
            raise FunctionCallError(_go_code_name(failed.code()), failed.details() or "") from exc
        return _decoded(answer)

    def _serve(self, name: str) -> _RunFunction:
        runner = self._registry.runner(name)
        # Before any gRPC thread exists, so that they all start on this CPU.
        self._cpu.confine()
        server = grpc.server(self._pool, options=_GRPC_OPTIONS)
        # Registered with the server's core, which then matches the method itself: cheaper
        # per call than a generic handler looked up in Python.
        cast(_Registering, server).add_registered_method_handlers(
            _SERVICE.full_name, {"RunFunction": _handler(runner)}
        )
        port = server.add_insecure_port(f"{_LOOPBACK}:0")
        server.start()
        self._servers.append(server)
        channel = grpc.insecure_channel(f"{_LOOPBACK}:{port}", options=_GRPC_OPTIONS)
        self._channels.append(channel)
        # Requests go out as the bytes the engine assembled (`wire`), not serialized again;
        # answers come back as bytes, decoded as in-process ones are (`_decoded`).
        method: _RunFunction = channel.unary_unary(
            RUN_FUNCTION_METHOD, request_serializer=None, response_deserializer=None
        )
        self._methods[name] = method
        return method


def _handler(runner: Runner) -> grpc.RpcMethodHandler:
    """The FunctionRunnerService: the runner's synchronous entry given each request as
    it arrived, on the server's handler thread; else its RunFunction, on a loop of that
    thread's own, given the request parsed and no servicer context, as in-process calls
    give it (this server's context is grpcio's synchronous one, which a RunFunction
    written for the SDK's grpc.aio server cannot await), so both modes answer alike."""
    direct = _bytes_runner(runner)

    def run_function(request: bytes, context: grpc.ServicerContext) -> fnv1.RunFunctionResponse:
        try:
            if direct is not None:
                # The engine's requests are deterministic (`wire`).
                response = direct.run_function_serialized(request, True)
            else:
                parsed = fnv1.RunFunctionRequest.FromString(request)
                response = asyncio.run(runner.RunFunction(parsed, None))
            return _checked(response)
        except FunctionCallError as exc:
            context.abort(grpc.StatusCode.UNKNOWN, exc.details)
        except Exception as exc:  # reported to the caller as the SDK's server reports it
            context.abort(grpc.StatusCode.UNKNOWN, _unexpected(exc))

    return grpc.unary_unary_rpc_method_handler(
        run_function,
        request_deserializer=None,
        response_serializer=fnv1.RunFunctionResponse.SerializeToString,
    )
