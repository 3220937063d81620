"""Structured fuzzing of composition functions, for every function's tests.

`mutate` breaks one thing in a Kubernetes object; `harness.Fuzzer` runs mutated
copies of valid requests through a function and checks that it never raises,
never answers with a fatal result, and never stops emitting what it composed
before; `determinism.nondeterminism` answers requests cold, warm, with the clock
throttled and in another process, and names any that differ;
`shuffle.reordered` gives the same request with every map in another order;
`examples` records real requests from rendering the example fleets.

    failures = Fuzzer(FunctionRunner()).run(requests_for(NAME), seed=1, count=1000)
    assert not failures, "\\n".join(map(str, failures))
"""

from modelplane_dev.fuzz.determinism import mutated_sample, nondeterminism
from modelplane_dev.fuzz.examples import example_requests, requests_for
from modelplane_dev.fuzz.harness import (
    Failure,
    Fuzzer,
    Mutated,
    Mutator,
    applied_elsewhere,
    final_response,
    run_function,
)
from modelplane_dev.fuzz.shuffle import reordered

__all__ = [
    "Failure",
    "Fuzzer",
    "Mutated",
    "Mutator",
    "applied_elsewhere",
    "example_requests",
    "final_response",
    "mutated_sample",
    "nondeterminism",
    "reordered",
    "requests_for",
    "run_function",
]
