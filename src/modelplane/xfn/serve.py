"""The standard function command line, shared so every function serves alike.

Flags and environment variables are the SDK's: --address (ADDRESS, default
0.0.0.0:9443), --tls-server-certs-dir (TLS_SERVER_CERTS_DIR), --insecure,
--debug, and the gRPC message-size limits.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Callable
from typing import Any

import click
from crossplane.function import cli as sdkcli
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1


def command(
    name: str, make_runner: Callable[[], grpcv1.FunctionRunnerServiceServicer]
) -> click.Command:
    @click.command(name=name, help=f"Serve the {name} composition function over gRPC.")
    @sdkcli.standard_options
    def serve(**options: Any) -> None:
        sdkcli.run(make_runner(), **options)

    return serve
