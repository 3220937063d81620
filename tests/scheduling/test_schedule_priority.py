"""A priority naming no PriorityClass: judged only against the classes the scheduler
was given (the PriorityNotFound cases of the scenario table are in test_schedule)."""

import pytest

from modelplane.core.vocabulary import Reason
from modelplane.scheduling.model import Priorities

from .builders import cluster, deployment, h100, placements, run


@pytest.mark.parametrize(
    "priorities", [None, Priorities({})], ids=["not fetched", "no class known"]
)
def test_an_unknown_priority_is_judged_only_against_known_classes(
    priorities: Priorities | None,
) -> None:
    """Without the PriorityClasses, or with none at all (an input that carries none:
    a real API server always has its system- classes), nothing can be said of a name."""
    decision = run(deployment(1, priority="nope"), [cluster("a", h100())], priorities=priorities)
    assert placements(decision) == ["a/0:h100"]
    assert decision.condition.reason == Reason.ALL_SCHEDULED


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"system-node-critical": 2, "train": 1, "inference": 5}, "inference, train"),
        ({"system-cluster-critical": 2}, "none but Kubernetes' system- classes"),
        (
            {f"p{i:02d}": i for i in range(12)},
            "p00, p01, p02, p03, p04, p05, p06, p07, p08, p09 and 2 more",
        ),
    ],
)
def test_an_unknown_priority_names_the_classes_a_team_may_choose(
    values: dict[str, int], named: str
) -> None:
    decision = run(
        deployment(1, priority="nope"), [cluster("a", h100())], priorities=Priorities(values)
    )
    assert decision.condition.reason == Reason.PRIORITY_NOT_FOUND
    assert f"(the control plane has: {named})" in decision.condition.message
