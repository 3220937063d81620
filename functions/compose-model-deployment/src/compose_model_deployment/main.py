"""Serve compose-model-deployment over gRPC."""

from compose_model_deployment.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-model-deployment", FunctionRunner)
