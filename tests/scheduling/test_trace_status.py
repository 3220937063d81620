"""A match trace's shape in status: which keys each entry carries, the trace as
lines of text, and the invariants a ClusterTrace keeps."""

import pytest
from modelplane_models.model_deployment import MatchTraceEntry

from modelplane.scheduling import ClusterTrace, PoolTrace, Rejection
from modelplane.scheduling.trace import status_trace

from .builders import HOPPER, cluster, deployment, h100, l4, request, role, run

ADA_1 = request("gpu", 1, "arch == Ada")


def published(entry: MatchTraceEntry) -> dict[str, object]:
    """The entry as the glue publishes it (`modelplane.xfn.runner.set_status`): a field
    that is None is left out."""
    return entry.model_dump(exclude_none=True, mode="json")


def test_status_entries_carry_only_the_keys_that_apply() -> None:
    decision = run(deployment(1, decode=role(HOPPER), prefill=role(ADA_1)), [cluster("a", h100())])
    unified = run(deployment(1), [cluster("b", l4())])
    shapes = [sorted(published(e)) for e in decision.match_trace() + unified.match_trace()]
    assert shapes == [
        ["cluster", "message", "reason"],
        ["cluster", "message", "pool", "reason", "role"],
        ["cluster", "message", "reason"],
        ["cluster", "message", "pool", "reason"],
    ]
    # Plain strings, so the status serialises as YAML and protobuf alike.
    for entry in decision.match_trace():
        assert all(type(value) is str for value in published(entry).values()), entry


def test_trace_lines_name_the_role() -> None:
    decision = run(deployment(1, decode=role(HOPPER), prefill=role(ADA_1)), [cluster("a", h100())])
    assert decision.trace_lines() == [
        "cluster a: no pool matches role prefill",
        "cluster a pool h100 (prefill): request 'gpu' (count 1): gpu: selector 'arch == Ada' "
        "is false",
    ]


def test_a_cluster_trace_in_status() -> None:
    trace = ClusterTrace(
        "a",
        Rejection.NO_MATCHING_POOL,
        "no pool matches role decode",
        (PoolTrace("h100", Rejection.TOO_FEW_DEVICES, "gpu has only 4 per node", "decode"),),
    )
    assert [published(e) for e in status_trace([trace]).entries] == [
        {"cluster": "a", "reason": "NoMatchingPool", "message": "no pool matches role decode"},
        {
            "cluster": "a",
            "pool": "h100",
            "role": "decode",
            "reason": "TooFewDevices",
            "message": "gpu has only 4 per node",
        },
    ]
    pools_only = ClusterTrace("a", None, None, trace.pools)
    assert [sorted(published(e)) for e in status_trace([pools_only]).entries] == [
        ["cluster", "message", "pool", "reason", "role"]
    ]


@pytest.mark.parametrize(
    ("reason", "message"),
    [(Rejection.NO_POOLS, None), (None, "publishes no GPU pools")],
    ids=["reason without message", "message without reason"],
)
def test_a_cluster_rejection_needs_reason_and_message(
    reason: Rejection | None, message: str | None
) -> None:
    with pytest.raises(ValueError, match="both a reason and a message"):
        ClusterTrace("a", reason, message)


def test_reasons_are_camel_case_words() -> None:
    for reason in Rejection:
        assert reason.value[0].isupper() and reason.value.isalpha(), reason
