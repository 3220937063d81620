"""Malformed input never becomes an internal error, and never drops a cache that exists.

Seeded mutations of the ModelCache requests the caching example sends: every answer
comes back without an exception or a fatal result.
"""

from typing import Any

import pytest
from compose_model_cache.fn import CLUSTERS, REPLICAS, FunctionRunner
from modelplane_models import InferenceCluster, ModelCache, ModelReplica

from modelplane.caching import read_cache
from modelplane.core.issues import parse_object
from modelplane_dev.fuzz import Fuzzer, mutated_sample, nondeterminism, requests_for

# A mutation these still read is a valid edit (credentials no longer named, a
# replica gone) and may let a composed object go; any other keeps every one.
READERS = {
    "composite": lambda obj: read_cache(parse_object(ModelCache, obj)),
    CLUSTERS: lambda obj: parse_object(InferenceCluster, obj),
    REPLICAS: lambda obj: parse_object(ModelReplica, obj),
}


# The mutations are cut into parts that xdist's workers share: one test of them all
# would be the longest of the suite and hold the last worker alone.
PARTS = 4


@pytest.mark.parametrize("part", range(PARTS))
def test_mutated_requests_keep_the_safety_net(part: int) -> None:
    requests = requests_for("modelplane-compose-model-cache", ("catalog", "caching"))
    assert requests
    readers: dict[str, Any] = dict(READERS)
    failures = Fuzzer(FunctionRunner(), readers).run(
        requests, seed=11, count=1500, part=part, parts=PARTS
    )
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29): a cache's
    retention is measured on the request's clock, never the machine's."""
    sample = mutated_sample(
        requests_for("modelplane-compose-model-cache", ("catalog", "caching")), seed=29, size=40
    )
    assert not nondeterminism(FunctionRunner, "compose_model_cache.fn:FunctionRunner", sample)
