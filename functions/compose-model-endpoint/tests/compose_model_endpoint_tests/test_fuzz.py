"""Malformed input never becomes an internal error.

Thousands of seeded mutations of the ModelEndpoints the serving example composes.
An endpoint composes nothing, so there is nothing to keep: every answer must come
back without an exception or a fatal result.
"""

from compose_model_endpoint.fn import FunctionRunner

from modelplane_dev.fuzz import Fuzzer, mutated_sample, nondeterminism, requests_for


def test_mutated_requests_keep_the_safety_net() -> None:
    requests = requests_for("modelplane-compose-model-endpoint", ("catalog", "serving"))
    assert requests
    failures = Fuzzer(FunctionRunner()).run(requests, seed=8, count=1500)
    assert not failures, "\n".join(map(str, failures))


def test_mutated_requests_answer_the_same_cold_warm_throttled_and_elsewhere() -> None:
    """No answer depends on the process, its caches or the clock (issue 29)."""
    sample = mutated_sample(
        requests_for("modelplane-compose-model-endpoint", ("catalog", "serving")), seed=29, size=40
    )
    assert not nondeterminism(FunctionRunner, "compose_model_endpoint.fn:FunctionRunner", sample)
