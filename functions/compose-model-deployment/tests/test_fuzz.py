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

import pytest
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, ModelDeployment, ModelReplica

from modelplane.core.issues import parse_object
from modelplane.scheduling import read_cluster, read_deployment, read_replica
from modelplane.xfn.structs import to_dict, to_struct
from modelplane_dev.fuzz import Fuzzer, mutated_sample, nondeterminism, requests_for


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


def scaled_up(req: fnv1.RunFunctionRequest, more: int) -> fnv1.RunFunctionRequest:
    """The request with `more` replicas wanted than run: mutations then also meet
    the code that places and composes new replicas."""
    scaled = fnv1.RunFunctionRequest()
    scaled.CopyFrom(req)
    composite = to_dict(req.observed.composite.resource)
    composite["spec"]["replicas"] = composite["spec"].get("replicas", 1) + more
    scaled.observed.composite.resource.CopyFrom(to_struct(composite))
    return scaled


def fuzzed_requests() -> list[fnv1.RunFunctionRequest]:
    """The valid requests the fuzzer mutates."""
    steady = [
        *requests_for("modelplane-compose-model-deployment"),
        # Deployments whose replicas serve through gateways: their ModelEndpoints.
        *requests_for("modelplane-compose-model-deployment", ("catalog", "serving")),
    ]
    assert steady
    requests = [*steady, *(scaled_up(req, 2) for req in steady)]
    return requests


# The mutations are cut into parts that xdist's workers share: one test of them all
# would be the longest of the suite and hold the last worker alone.
PARTS = 4


@pytest.mark.parametrize("part", range(PARTS))
def test_mutated_requests_keep_the_safety_net(part: int) -> None:
    requests = fuzzed_requests()
    failures = Fuzzer(FunctionRunner(), READERS).run(
        requests, seed=8, count=1500, part=part, parts=PARTS
    )
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29)."""
    sample = mutated_sample(fuzzed_requests(), seed=29, size=40)
    assert not nondeterminism(FunctionRunner, "compose_model_deployment.fn:FunctionRunner", sample)
