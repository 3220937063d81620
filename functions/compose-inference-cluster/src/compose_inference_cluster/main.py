"""Serve compose-inference-cluster over gRPC."""

from compose_inference_cluster.fn import FunctionRunner
from modelplane.xfn.serve import command

main = command("compose-inference-cluster", FunctionRunner)
