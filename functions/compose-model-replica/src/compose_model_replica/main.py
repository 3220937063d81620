"""Serve compose-model-replica over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-model-replica", "compose_model_replica.fn:FunctionRunner")
