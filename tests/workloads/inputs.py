"""Read test objects the way the glue does: into the generated models, then the renderer's
inputs."""

from typing import Any

from modelplane_models.inference_cluster import InferenceCluster
from modelplane_models.model_replica import ModelReplica

from modelplane.core.issues import parse_object
from modelplane.workloads import ClusterInput, ReplicaInput, cluster_input, replica_input


def read_replica(obj: dict[str, Any]) -> ReplicaInput:
    return replica_input(parse_object(ModelReplica, obj))


def read_cluster(obj: dict[str, Any]) -> ClusterInput:
    return cluster_input(parse_object(InferenceCluster, obj))
