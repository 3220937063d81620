"""Serve compose-inference-gateway over gRPC."""

from compose_inference_gateway.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-inference-gateway", FunctionRunner)
