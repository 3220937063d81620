"""Malformed input never becomes an internal error.

Thousands of seeded mutations of the InferenceClasses of the example catalog:
wrong types, missing fields, nulls, bad strings and numbers, non-map metadata.
"""

import pytest
from compose_inference_class.fn import FunctionRunner

from modelplane_dev.fuzz import Fuzzer, mutated_sample, nondeterminism, requests_for

# The mutations are cut into parts that xdist's workers share: one test of them all
# would be the longest of the suite and hold the last worker alone.
PARTS = 3


@pytest.mark.parametrize("part", range(PARTS))
def test_mutated_requests_keep_the_safety_net(part: int) -> None:
    requests = requests_for("modelplane-compose-inference-class")
    assert requests
    failures = Fuzzer(FunctionRunner()).run(requests, seed=8, count=2000, part=part, parts=PARTS)
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29)."""
    sample = mutated_sample(requests_for("modelplane-compose-inference-class"), seed=29, size=40)
    assert not nondeterminism(FunctionRunner, "compose_inference_class.fn:FunctionRunner", sample)
