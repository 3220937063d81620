"""Malformed input never becomes an internal error.

Thousands of seeded mutations of the ModelEndpoints the serving example composes.
An endpoint composes nothing, so there is nothing to keep: every answer must come
back without an exception or a fatal result.
"""

from compose_model_endpoint.fn import FunctionRunner

from modelplane_cli.fuzz import Fuzzer, requests_for


def test_mutated_requests_keep_the_safety_net() -> None:
    requests = requests_for("modelplane-compose-model-endpoint", ("catalog", "serving"))
    assert requests
    failures = Fuzzer(FunctionRunner()).run(requests, seed=8, count=1500)
    assert not failures, "\n".join(map(str, failures))
