"""Serve compose-inference-class over gRPC."""

from compose_inference_class.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-inference-class", FunctionRunner)
