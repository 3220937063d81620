"""Serve compose-inference-class over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-inference-class", "compose_inference_class.fn:FunctionRunner")
