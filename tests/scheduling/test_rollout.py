"""The rollout's budget and strategy, read as a Deployment's are."""

import copy

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.scheduling import RollingUpdate
from modelplane.scheduling.rollout import Budget, budget

from .builders import deployment, read_dep


@pytest.mark.parametrize(
    ("unavailable", "surge", "replicas", "expected"),
    [
        ("25%", "25%", 4, Budget(1, 1)),
        ("25%", "25%", 3, Budget(0, 1)),  # down rounds down, surge rounds up
        ("25%", "25%", 1, Budget(0, 1)),
        ("25%", "25%", 0, Budget(1, 0)),  # both 0: one may go, as a Deployment's
        ("50%", "0%", 5, Budget(2, 0)),
        ("100%", "100%", 7, Budget(7, 7)),
        (2, 0, 10, Budget(2, 0)),
        (0, "10%", 3, Budget(0, 1)),
        ("10%", 0, 3, Budget(1, 0)),  # 0 and 0 after rounding
    ],
)
def test_budget(unavailable: int | str, surge: int | str, replicas: int, expected: Budget) -> None:
    assert budget(RollingUpdate(unavailable, surge), replicas) == expected


def _with_strategy(rolling: dict[str, object]) -> dict[str, object]:
    obj = deployment(4)
    obj["spec"]["strategy"] = {"rollingUpdate": rolling}
    return obj


def test_the_strategy_is_read_as_written_with_defaults() -> None:
    assert read_dep(deployment(4)).strategy == RollingUpdate("25%", "25%")
    read = read_dep(_with_strategy({"maxUnavailable": 2}))
    assert read.strategy == RollingUpdate(2, "25%")
    # Numbers reach a function through protobuf's Struct as doubles.
    read = read_dep(_with_strategy({"maxUnavailable": 1.0, "maxSurge": "50%"}))
    assert read.strategy == RollingUpdate(1, "50%")


@pytest.mark.parametrize(
    ("rolling", "message"),
    [
        ({"maxUnavailable": "lots"}, "spec.strategy.rollingUpdate.maxUnavailable: must be"),
        ({"maxSurge": "150%"}, "spec.strategy.rollingUpdate.maxSurge: must be"),
        ({"maxSurge": 1.5}, "spec.strategy.rollingUpdate.maxSurge: must be"),
        (
            {"maxUnavailable": 0, "maxSurge": "0%"},
            "spec.strategy.rollingUpdate: maxUnavailable and maxSurge may not both be 0",
        ),
    ],
)
def test_a_strategy_admission_would_refuse_names_the_field(
    rolling: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        read_dep(_with_strategy(rolling))
    assert any(str(issue).startswith(message) for issue in refused.value.issues), [
        str(i) for i in refused.value.issues
    ]


def test_the_revision_follows_what_a_replica_renders() -> None:
    base = read_dep(deployment(4)).revision
    assert len(base) == 10
    assert read_dep(deployment(7)).revision == base  # the count is not what one runs
    assert read_dep(_with_strategy({"maxUnavailable": 3})).revision == base
    selected = deployment(4, cluster_selector={"matchLabels": {"tier": "prod"}})
    assert read_dep(selected).revision == base
    assert read_dep(deployment(4, priority="high")).revision != base
    bumped = copy.deepcopy(deployment(4))  # the builders share one template
    bumped["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
    assert read_dep(bumped).revision != base
