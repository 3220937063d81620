"""Serve compose-model-replica over gRPC."""

from compose_model_replica.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-model-replica", FunctionRunner)
