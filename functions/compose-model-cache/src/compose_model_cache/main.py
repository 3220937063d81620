"""Serve compose-model-cache over gRPC."""

from compose_model_cache.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-model-cache", FunctionRunner)
