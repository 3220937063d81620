"""Malformed input never becomes an internal error, and never drops the ProviderConfig.

Thousands of seeded mutations of the requests an InferenceCluster's function
receives while the example fleet renders, its composite and its required
InferenceClasses alike. No mutation, valid or not, may stop it emitting the
ProviderConfig that reaches the cluster.
"""

from compose_inference_cluster.fn import FunctionRunner

from modelplane_cli.fuzz import Fuzzer, requests_for


def test_mutated_requests_keep_the_safety_net() -> None:
    requests = requests_for("modelplane-compose-inference-cluster")
    assert requests
    failures = Fuzzer(FunctionRunner()).run(requests, seed=8, count=1500)
    assert not failures, "\n".join(map(str, failures))
