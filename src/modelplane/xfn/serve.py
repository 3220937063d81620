"""The standard function command line, shared so every function serves alike.

Flags and environment variables are the SDK's: --address (ADDRESS, default
0.0.0.0:9443), --tls-server-certs-dir (TLS_SERVER_CERTS_DIR), --insecure,
--debug, and the gRPC message-size limits, in MiB.

Crossplane sends a function the whole fleet it asks for in one request: about
2 KB per InferenceCluster and ModelReplica, so 20-35 MB at 10,000 clusters. The
SDK's 4 MiB default would refuse that at the transport, and Crossplane would
only say the call failed. So `--max-recv-message-size` (MAX_RECV_MESSAGE_SIZE)
defaults to `DEFAULT_MAX_MESSAGE_MIB` here, and it is enforced by the function
itself rather than by gRPC: a bigger request is answered with the function's
validity condition False (`RequestTooLarge`, saying how big it was and which
flag raises the limit) and every composed resource and published status field
kept as observed, so nothing is deleted. gRPC's own limit is then the most a
protobuf message can hold.

A ComposeFunction is served from each request's bytes (`received`), keys what
Crossplane fetched by uid and resourceVersion (`required.trust_resource_versions`),
and composes on `--workers` processes (WORKERS; `workers`). See
design/go-order-requests.md.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import asyncio
import importlib
import signal
from dataclasses import dataclass
from typing import Any

import click
import grpc
from crossplane.function import cli as sdkcli
from crossplane.function import logging, response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from google.protobuf.message import DecodeError
from grpc_reflection.v1alpha import reflection

from modelplane.core.vocabulary import Reason
from modelplane.xfn import report, required
from modelplane.xfn.received import split, undecodable
from modelplane.xfn.runner import ComposeFunction, keep_observed, keep_status
from modelplane.xfn.workers import Workers, default_workers

DEFAULT_MAX_MESSAGE_MIB = 128
"""Room for a 10,000-cluster fleet and its replicas, several times over."""
_TRANSPORT_MIB = 2047  # protobuf messages stop at 2 GiB
_MIB = 1024 * 1024


class SizeLimited(grpcv1.FunctionRunnerServiceServicer):
    """A ComposeFunction that answers a request over `limit` bytes with a condition."""

    def __init__(self, runner: ComposeFunction, limit: int, workers: Workers | None = None) -> None:
        self.runner = runner
        self.limit = limit
        self.workers = workers

    async def RunFunction(  # noqa: N802 (the gRPC method name)
        self,
        request: fnv1.RunFunctionRequest,
        context: "grpc.aio.ServicerContext[Any, Any] | None" = None,
    ) -> fnv1.RunFunctionResponse:
        size = request.ByteSize()
        if size <= self.limit:
            return await self.runner.RunFunction(request, context)
        return await self.too_large(request, size)

    async def run_bytes(self, data: bytes, _context: object = None) -> bytes:
        """RunFunction of a request as it arrived, answered as bytes: its size is its
        length, its fetched lists stay bytes until read (`received`), and it is
        composed by a worker process when there are `workers`."""
        if len(data) > self.limit:
            try:
                req = _without_fetched(data)
            except DecodeError as error:
                return undecodable(data, error).SerializeToString(deterministic=True)
            rsp = await self.too_large(req, len(data))
            return rsp.SerializeToString(deterministic=True)
        if self.workers is not None:
            return await self.workers.run(data)
        # Deterministic, so any process sends the same bytes for the same answer.
        return (await self.runner.run_serialized(data)).SerializeToString(deterministic=True)

    async def too_large(self, req: fnv1.RunFunctionRequest, size: int) -> fnv1.RunFunctionResponse:
        # Ask for what the function asks for without the fetched resources, so
        # Crossplane's fetch loop settles instead of failing on changed requirements.
        bare = fnv1.RunFunctionRequest()
        bare.CopyFrom(req)
        bare.ClearField("required_resources")
        bare.ClearField("extra_resources")
        asked = await self.runner.RunFunction(bare, None)
        rsp = response.to(req)
        if asked.HasField("requirements"):
            rsp.requirements.CopyFrom(asked.requirements)
        keep_observed(req, rsp)
        keep_status(req, rsp, self.runner.published_status)
        message = (
            f"the request is {size / _MIB:.1f} MiB, over this function's limit of "
            f"{self.limit / _MIB:.0f} MiB: raise --max-recv-message-size "
            "(MAX_RECV_MESSAGE_SIZE, in MiB); everything composed is kept as it is"
        )
        report.set_condition(
            rsp,
            report.Condition(
                self.runner.validity_condition, False, Reason.REQUEST_TOO_LARGE, message
            ),
        )
        report.warning(rsp, Reason.REQUEST_TOO_LARGE, message)
        return rsp


def _without_fetched(data: bytes) -> fnv1.RunFunctionRequest:
    """The request without its fetched lists, which an answer to a request over the
    limit neither reads nor sends back: a list protobuf cannot decode here then makes
    that answer no fatal one. The whole request where `received` cannot split it."""
    try:
        return split(data)[0]
    except ValueError:
        return fnv1.RunFunctionRequest.FromString(data)


def _bytes_handler(runner: SizeLimited) -> grpc.GenericRpcHandler:
    """RunFunction (v1), handing the runner each request as it arrived."""
    return grpc.method_handlers_generic_handler(
        _SERVICE,
        {
            "RunFunction": grpc.unary_unary_rpc_method_handler(
                runner.run_bytes,
                request_deserializer=None,
                response_serializer=None,
            )
        },
    )


_SERVICE = fnv1.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name


def _serve(
    runner: SizeLimited,
    address: str,
    *,
    creds: grpc.ServerCredentials | None,
    insecure: bool,
    grpc_options: list[tuple[str, Any]],
) -> None:
    """The SDK's server (`crossplane.function.runtime.serve`: v1 and v1beta1, reflection,
    mTLS or insecure, a graceful stop on SIGTERM), v1 served from the request's bytes."""
    if creds is None and not insecure:
        raise ValueError("no credentials were provided: give --tls-server-certs-dir or --insecure")
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    server = grpc.aio.server(options=grpc_options)
    loop.add_signal_handler(
        signal.SIGTERM,
        lambda: asyncio.ensure_future(server.stop(grace=runtime.SHUTDOWN_GRACE_PERIOD_SECONDS)),
    )
    server.add_generic_rpc_handlers((_bytes_handler(runner),))
    grpcv1beta1.add_FunctionRunnerServiceServicer_to_server(  # pyright: ignore[reportUnknownMemberType]
        runtime.BetaFunctionRunner(wrapped=runner), server
    )
    reflection.enable_server_reflection(runtime.SERVICE_NAMES, server)
    if creds is not None:
        server.add_secure_port(address, creds)
    if insecure:
        server.add_insecure_port(address)

    async def start() -> None:
        await server.start()
        await server.wait_for_termination()

    try:
        loop.run_until_complete(start())
    finally:
        loop.run_until_complete(server.stop(grace=runtime.SHUTDOWN_GRACE_PERIOD_SECONDS))
        loop.close()


@dataclass(frozen=True)
class Imported:
    """A function's runner named by "module:class", imported when first called: a
    function's command names its runner this way so that its worker processes are
    started before the server's own process imports the function, and import it
    alongside (`command`). Picklable, so each spawned worker imports it too."""

    spec: str

    def __call__(self) -> ComposeFunction:
        module, _, name = self.spec.partition(":")
        runner = getattr(importlib.import_module(module), name)()
        if not isinstance(runner, ComposeFunction):
            raise TypeError(f"{self.spec} is not a ComposeFunction")
        return runner


def command(name: str, runner: str) -> click.Command:
    """The function's command line. `runner` names the function's ComposeFunction as
    "module:class": the function is imported only once the flags are read and the
    worker processes are starting, so the server process and the workers import it
    at the same time rather than one after the other (a function pod starts about as
    fast as one process imports it)."""

    @click.command(name=name, help=f"Serve the {name} composition function over gRPC.")
    @sdkcli.standard_options
    @click.option(
        "--workers",
        type=click.IntRange(min=0),
        default=0,
        envvar="WORKERS",
        help="Processes composing calls at once; 0 (the default) is the container's CPU "
        "limit (at most 2 without one), 1 composes in the server's own process.",
    )
    def serve(
        max_recv_message_size: int, max_send_message_size: int | None, workers: int, **options: Any
    ) -> None:
        factory = Imported(runner)
        processes = workers or default_workers()
        pool = Workers(factory, processes, debug=bool(options["debug"])) if processes > 1 else None
        try:
            limited = SizeLimited(factory(), max_recv_message_size * _MIB, pool)
            if pool is not None:
                pool.started()
        except BaseException:
            if pool is not None:
                pool.close()
            raise
        send = max_send_message_size or max_recv_message_size
        # Crossplane's objects come from the API server, every write a new resourceVersion.
        required.trust_resource_versions(True)
        logging.configure(level=logging.Level.DEBUG if options["debug"] else logging.Level.INFO)
        try:
            _serve(
                limited,
                options["address"],
                creds=runtime.load_credentials(options["tls_certs_dir"]),
                insecure=options["insecure"],
                grpc_options=[
                    ("grpc.max_receive_message_length", _TRANSPORT_MIB * _MIB),
                    ("grpc.max_send_message_length", send * _MIB),
                ],
            )
        finally:
            if pool is not None:
                pool.close()

    for param in serve.params:
        if param.name == "max_recv_message_size":
            param.default = DEFAULT_MAX_MESSAGE_MIB
    return serve
