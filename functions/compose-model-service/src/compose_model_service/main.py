"""Serve compose-model-service over gRPC."""

from compose_model_service.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-model-service", FunctionRunner)
