"""Serve compose-model-endpoint over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-model-endpoint", "compose_model_endpoint.fn:FunctionRunner")
