"""A selector that fails to evaluate on every device is named in ReplicasScheduled.

A misspelt attribute is the spec's error, not a lack of hardware: the condition's
message says which selector failed and why, not only that no pool matched.
"""

from .builders import cluster, deployment, h100, l4, request, run


def test_a_selector_failing_on_every_device_is_named_in_the_condition() -> None:
    decision = run(deployment(1, request("gpu", 1, "rack == r1")), [cluster("a", h100(), l4())])
    assert decision.condition.reason == "InsufficientCapacity"
    assert decision.condition.message == (
        "0 of 1 replicas scheduled: no pool on the 1 selected cluster matches the "
        "nodeSelector: its selectors failed to evaluate on every device (request 'gpu': "
        "selector 'rack == r1' failed: no such key: rack); 0/1 clusters available: "
        "1 SelectorMismatch"
    )


def test_a_selector_false_on_some_device_is_a_mismatch_only() -> None:
    decision = run(
        deployment(1, request("gpu", 1, "arch == Blackwell")), [cluster("a", h100(), l4())]
    )
    assert decision.condition.message == (
        "0 of 1 replicas scheduled: no pool on the 1 selected cluster matches the "
        "nodeSelector; 0/1 clusters available: 1 SelectorMismatch"
    )
