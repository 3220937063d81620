"""Serve compose-model-deployment over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-model-deployment", "compose_model_deployment.fn:FunctionRunner")
