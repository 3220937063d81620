"""Serve compose-inference-gateway over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-inference-gateway", "compose_inference_gateway.fn:FunctionRunner")
