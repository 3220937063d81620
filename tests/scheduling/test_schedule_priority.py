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
