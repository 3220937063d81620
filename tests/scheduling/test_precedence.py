"""The precedence rule, and the PriorityClasses it reads."""

import pytest

from modelplane.scheduling import Priorities, Standing, because, may_displace, precedes
from modelplane.scheduling.adapt import read_priorities


def standing(
    name: str,
    *,
    serving: bool = False,
    priority: int = 0,
    created: str | None = None,
    namespace: str = "ml",
    new: bool = False,
) -> Standing:
    return Standing(namespace, name, "owner", serving, priority, "pc", created, new)


ORDER = [
    # (id, first, second, why first precedes)
    (
        "serving before not serving, whatever the priority",
        standing("a", serving=True),
        standing("b", priority=1000),
        "it is serving and this replica is not",
    ),
    (
        "higher priority first",
        standing("b", priority=10),
        standing("a", priority=5),
        "it has higher priority (pc 10 > pc 5)",
    ),
    (
        "older first",
        standing("b", created="2026-01-01T00:00:00Z"),
        standing("a", created="2026-02-01T00:00:00Z"),
        "it is older",
    ),
    (
        "a recorded creation time before none",
        standing("b", created="2026-01-01T00:00:00Z"),
        standing("a"),
        "it records a creation time and this replica does not",
    ),
    (
        "an existing replica before a new one",
        standing("z"),
        standing("", new=True),
        "it already exists and has the same priority",
    ),
    (
        "namespace, then name, when nothing else tells them apart",
        standing("a", namespace="x"),
        standing("a", namespace="y"),
        "neither records when it was created",
    ),
]


@pytest.mark.parametrize(
    ("first", "second", "why"), [o[1:] for o in ORDER], ids=[o[0] for o in ORDER]
)
def test_order(first: Standing, second: Standing, why: str) -> None:
    assert precedes(first, second)
    assert not precedes(second, first)
    assert why in because(first, second)


def test_a_new_replica_displaces_only_lower_priorities_that_are_not_serving() -> None:
    new = standing("", priority=100, new=True)
    assert may_displace(new, standing("x", priority=10))
    assert not may_displace(new, standing("x", priority=10, serving=True))
    assert not may_displace(new, standing("x", priority=100))
    assert not may_displace(new, standing("x", priority=100, created=None))


def test_other_namespaces_are_not_named() -> None:
    assert standing("r").describe("ml") == "replica r of ModelDeployment owner"
    assert standing("r").describe("team") == "a replica in another namespace"


def test_priority_classes_are_read_into_values_and_a_default() -> None:
    classes = [
        {"metadata": {"name": "high"}, "value": 1000},
        {"metadata": {"name": "base"}, "value": 50, "globalDefault": True},
        {"metadata": {"name": "broken"}, "value": "x"},
        {"metadata": {}, "value": 3},
        {"value": 7},
    ]
    priorities = read_priorities(classes)
    assert priorities == Priorities({"base": 50, "high": 1000}, 50)
    assert priorities.value("high") == 1000
    assert priorities.value(None) == 50
    assert priorities.value("unknown") == 50
    assert read_priorities([]).value(None) == 0
