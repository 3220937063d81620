"""Serve compose-model-service over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-model-service", "compose_model_service.fn:FunctionRunner")
