"""Serve compose-model-endpoint over gRPC."""

from compose_model_endpoint.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-model-endpoint", FunctionRunner)
