"""Serve compose-model-cache over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-model-cache", "compose_model_cache.fn:FunctionRunner")
