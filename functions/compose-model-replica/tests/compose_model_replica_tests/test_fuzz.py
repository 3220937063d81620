"""Malformed input never becomes an internal error, and never takes a workload down.

Thousands of seeded mutations of the requests a ModelReplica's function receives
while the example fleets render: its composite, the Objects it composed (and the
workload state they report), its InferenceCluster and the PriorityClasses KAI's
rules read. A mutation the function's own readers still accept is a valid edit
(a pool renamed, a cluster switched to KServe) and may replace a workload; any
other must keep every Object composed before.
"""

from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, ModelReplica

from modelplane.conventions import parse_scheduling
from modelplane.core.issues import InvalidInputError, has_errors, parse_object
from modelplane.workloads.inputs import cluster_input, replica_input
from modelplane_dev.fuzz import Fuzzer, mutated_sample, nondeterminism, requests_for


def replica(obj: dict[str, Any]) -> object:
    return replica_input(parse_object(ModelReplica, obj))


def cluster(obj: dict[str, Any]) -> object:
    model = parse_object(InferenceCluster, obj)
    _, issues = parse_scheduling(model.spec.scheduling if model.spec else None)
    if has_errors(issues):
        raise InvalidInputError(issues)
    return cluster_input(model)


READERS = {"composite": replica, "inferencecluster": cluster}


def requests() -> list[fnv1.RunFunctionRequest]:
    found = requests_for("modelplane-compose-model-replica")
    # Replicas on clusters with a Gateway: their Services, pools, pickers and routes.
    serving = requests_for("modelplane-compose-model-replica", ("catalog", "serving"))
    assert found and serving
    return [*found, *serving]


# The mutations are cut into parts that xdist's workers share: one test of them all
# would be the longest of the suite and hold the last worker alone.
PARTS = 3


@pytest.mark.parametrize("part", range(PARTS))
def test_mutated_requests_keep_the_safety_net(part: int) -> None:
    failures = Fuzzer(FunctionRunner(), READERS).run(
        requests(), seed=8, count=1500, part=part, parts=PARTS
    )
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29)."""
    sample = mutated_sample(requests(), seed=29, size=40)
    assert not nondeterminism(FunctionRunner, "compose_model_replica.fn:FunctionRunner", sample)
