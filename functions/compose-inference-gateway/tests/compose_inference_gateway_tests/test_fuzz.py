"""Malformed input never becomes an internal error, and never takes the entry Gateway down.

Thousands of seeded mutations of the requests the InferenceGateway of the serving
example receives: the gateway, its composed Objects and its hub cluster. A
mutation the function's readers still accept is a valid edit; any other must
keep both Objects.
"""

from typing import Any

import pytest
from compose_inference_gateway.fn import FunctionRunner
from modelplane_models import InferenceCluster, InferenceGateway

from modelplane.core.issues import parse_object
from modelplane_dev.fuzz import (
    Fuzzer,
    applied_elsewhere,
    mutated_sample,
    nondeterminism,
    requests_for,
)


def gateway(obj: dict[str, Any]) -> object:
    model = parse_object(InferenceGateway, obj)
    assert model.metadata is not None and model.metadata.name and model.spec is not None
    return model


def cluster(obj: dict[str, Any]) -> object:
    model = parse_object(InferenceCluster, obj)
    assert model.status is not None and model.status.providerConfigRef is not None
    assert model.status.providerConfigRef.name
    return model


# The mutations are cut into parts that xdist's workers share: one test of them all
# would be the longest of the suite and hold the last worker alone.
PARTS = 3


@pytest.mark.parametrize("part", range(PARTS))
def test_mutated_requests_keep_the_safety_net(part: int) -> None:
    requests = requests_for("modelplane-compose-inference-gateway", ("catalog", "serving"))
    assert requests
    readers = {
        "composite": gateway,
        "inferencecluster": cluster,
        # The example's hub: an Object read as applied elsewhere is a move.
        "observed": applied_elsewhere("serve-us-east"),
    }
    failures = Fuzzer(FunctionRunner(), readers).run(
        requests, seed=8, count=1500, part=part, parts=PARTS
    )
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29)."""
    sample = mutated_sample(
        requests_for("modelplane-compose-inference-gateway", ("catalog", "serving")),
        seed=29,
        size=40,
    )
    assert not nondeterminism(FunctionRunner, "compose_inference_gateway.fn:FunctionRunner", sample)
