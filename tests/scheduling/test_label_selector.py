"""Kubernetes LabelSelector semantics over cluster labels."""

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.scheduling.label_selector import compile_label_selector
from modelplane.scheduling.model import LabelRequirement, LabelSelector

from .builders import Obj


def parse_label_selector(selector: Obj) -> LabelSelector:
    """A LabelSelector kept as written, as the adapter keeps a clusterSelector (the
    schema's operator enum aside, which these cases step outside of on purpose)."""
    return LabelSelector(
        match_labels=tuple(sorted(selector.get("matchLabels", {}).items())),
        match_expressions=tuple(
            LabelRequirement(e.get("key", ""), e.get("operator", ""), tuple(e.get("values", ())))
            for e in selector.get("matchExpressions", [])
        ),
    )


LABELS = {"tier": "prod", "region": "us-east", "gpu": "h100"}

SELECTS = [
    ("empty selector", {}, True),
    ("matchLabels hit", {"matchLabels": {"tier": "prod"}}, True),
    ("matchLabels miss", {"matchLabels": {"tier": "dev"}}, False),
    ("matchLabels absent key", {"matchLabels": {"zone": "a"}}, False),
    (
        "In hit",
        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["dev", "prod"]}]},
        True,
    ),
    (
        "In absent key",
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
        False,
    ),
    (
        "NotIn hit",
        {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["prod"]}]},
        False,
    ),
    (
        "NotIn absent key holds",
        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]},
        True,
    ),
    ("Exists", {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}, True),
    ("Exists absent", {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}, False),
    ("DoesNotExist", {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, True),
    (
        "DoesNotExist present",
        {"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]},
        False,
    ),
    (
        "requirements are ANDed",
        {
            "matchLabels": {"tier": "prod"},
            "matchExpressions": [{"key": "region", "operator": "In", "values": ["eu"]}],
        },
        False,
    ),
]


@pytest.mark.parametrize(
    ("selector", "selected"), [c[1:] for c in SELECTS], ids=[c[0] for c in SELECTS]
)
def test_selects(selector: Obj, selected: bool) -> None:
    compiled = compile_label_selector(parse_label_selector(selector))
    assert compiled.matches(LABELS) is selected
    assert (compiled.explain(LABELS) is None) is selected


def test_absent_selector_selects_everything() -> None:
    assert compile_label_selector(None).matches({})


INVALID = [
    (
        "unknown operator",
        {"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]},
        "operator: 'in' is not one of",
    ),
    (
        "In without values",
        {"matchExpressions": [{"key": "a", "operator": "In"}]},
        "values: must be non-empty for operator In",
    ),
    (
        "Exists with values",
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
        "values: must be empty for operator Exists",
    ),
    ("bad key", {"matchLabels": {"-bad": "x"}}, "invalid label key '-bad'"),
    ("bad value", {"matchLabels": {"ok": "has space"}}, "invalid label value 'has space'"),
    (
        "bad expression value",
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["a/b"]}]},
        "values[0]: invalid label value",
    ),
]


@pytest.mark.parametrize(
    ("selector", "problem"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid(selector: Obj, problem: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        compile_label_selector(parse_label_selector(selector))
    found = [str(issue) for issue in error.value.issues]
    assert any(problem in p for p in found), found
    assert all(p.startswith("spec.clusterSelector.") for p in found)
    assert {issue.reason for issue in error.value.issues} == {"InvalidClusterSelector"}
