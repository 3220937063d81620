"""Serve compose-inference-cluster over gRPC."""

from modelplane.xfn.serve import command

# Named, not imported: the worker processes start while this one imports it.
main = command("compose-inference-cluster", "compose_inference_cluster.fn:FunctionRunner")
