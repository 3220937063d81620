"""Malformed input never becomes an internal error, and never takes a replica down.

Thousands of seeded mutations of the requests the fleet scheduler receives while
the example fleet renders: wrong types, missing fields, nulls, bad strings and
numbers, non-map metadata, duplicated items, garbage and removed clusters and
replicas. A mutation the function's own readers (the generated model, then the
scheduler's adapter) still accept is a valid edit (a lower replica count, a
cluster removed) and may let a replica go; any other must keep every replica
composed before.
"""

from typing import Any

from compose_model_deployment.fn import FunctionRunner
from modelplane_models import InferenceCluster, ModelDeployment, ModelReplica

from modelplane.core.issues import parse_object
from modelplane.scheduling import read_cluster, read_deployment, read_replica
from modelplane_cli.fuzz import Fuzzer, requests_for


def deployment(obj: dict[str, Any]) -> object:
    return read_deployment(parse_object(ModelDeployment, obj))


def cluster(obj: dict[str, Any]) -> object:
    return read_cluster(parse_object(InferenceCluster, obj))


def replica(obj: dict[str, Any]) -> object:
    return read_replica(parse_object(ModelReplica, obj), "replica", "namespace", None)


READERS = {
    "composite": deployment,
    "observed": replica,
    "inferenceclusters": cluster,
    "modelreplicas": replica,
}


def test_mutated_requests_keep_the_safety_net() -> None:
    requests = requests_for("modelplane-compose-model-deployment")
    assert requests
    failures = Fuzzer(FunctionRunner(), READERS).run(requests, seed=8, count=1500)
    assert not failures, "\n".join(map(str, failures))
