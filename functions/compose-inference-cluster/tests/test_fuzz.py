"""Malformed input never becomes an internal error, and never drops what was composed.

Thousands of seeded mutations of the requests an InferenceCluster's function
receives while the example fleets render: the main fleet, and the stack example
with a Managed cluster (Releases, Usages) and an Observe one. The composite, its
required InferenceClasses and ModelReplicas, and its observed resources are all
mutated. A mutation the function's own readers still accept is a valid edit (a
scheduler changed, a replica gone) and may let a resource go; any other must keep
the ProviderConfigs, every Release, Usage and Observe Object composed before.
"""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceClass, InferenceCluster, ModelReplica

from modelplane.conventions import parse_scheduling
from modelplane.conventions.tenancy import read_tenancy
from modelplane.core.issues import InvalidInputError, Issue, has_errors, parse_object
from modelplane.fleet.classes import class_issues
from modelplane.stack import read_stack
from modelplane_dev.fuzz import Fuzzer, mutated_sample, nondeterminism, requests_for


def cluster(obj: dict[str, Any]) -> object:
    model = parse_object(InferenceCluster, obj)
    spec = model.spec
    if spec is None or model.metadata is None or not model.metadata.name:
        raise InvalidInputError([Issue("spec", "is required")])
    problems: list[Issue] = []
    problems += read_stack(spec.stack)[1]
    problems += read_tenancy(spec.tenancy, model.metadata.name)[1]
    problems += parse_scheduling(spec.scheduling)[1]
    if has_errors(problems):
        raise InvalidInputError(problems)
    return model


def inference_class(obj: dict[str, Any]) -> object:
    model = parse_object(InferenceClass, obj)
    if has_errors(class_issues(model)):
        raise InvalidInputError(class_issues(model))
    return model


def replica(obj: dict[str, Any]) -> object:
    return parse_object(ModelReplica, obj)


def readers(requests: list[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"composite": cluster, "modelreplicas": replica}
    for req in requests:
        for name in req.required_resources:
            if name.startswith("inferenceclass-"):
                found[name] = inference_class
    return found


def fuzzed_requests() -> list[fnv1.RunFunctionRequest]:
    """The valid requests the fuzzer mutates."""
    requests = [
        *requests_for("modelplane-compose-inference-cluster"),
        *requests_for(
            "modelplane-compose-inference-cluster",
            ("catalog", "schedulers/models.yaml", "stack"),
        ),
        *requests_for("modelplane-compose-inference-cluster", ("clusters/eks",)),
    ]
    assert any("release-lws" in req.observed.resources for req in requests)
    assert any("eks-nodegroup-h100" in req.observed.resources for req in requests)
    return requests


# The mutations are cut into parts that xdist's workers share: one test of them all
# would be the longest of the suite and hold the last worker alone.
PARTS = 10


@pytest.mark.parametrize("part", range(PARTS))
def test_mutated_requests_keep_the_safety_net(part: int) -> None:
    requests = fuzzed_requests()
    failures = Fuzzer(FunctionRunner(), readers(requests)).run(
        requests, seed=8, count=2500, part=part, parts=PARTS
    )
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29)."""
    sample = mutated_sample(fuzzed_requests(), seed=29, size=40)
    assert not nondeterminism(FunctionRunner, "compose_inference_cluster.fn:FunctionRunner", sample)
