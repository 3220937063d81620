"""Kubernetes LabelSelector semantics over cluster labels."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


_KEYS = st.sampled_from(["tier", "region", "gpu"])
_VALUES = st.sampled_from(["a", "b", "c"])
_EXPRESSIONS = st.one_of(
    st.builds(
        lambda k, op, vs: {"key": k, "operator": op, "values": vs},
        _KEYS,
        st.sampled_from(["In", "NotIn"]),
        st.lists(_VALUES, min_size=1, max_size=3),
    ),
    st.builds(
        lambda k, op: {"key": k, "operator": op}, _KEYS, st.sampled_from(["Exists", "DoesNotExist"])
    ),
)


@given(
    match_labels=st.dictionaries(_KEYS, _VALUES, max_size=3),
    expressions=st.lists(_EXPRESSIONS, max_size=3),
    labels=st.dictionaries(_KEYS, _VALUES, max_size=3),
)
def test_implied_labels_hold_wherever_the_selector_matches(
    match_labels: dict[str, str], expressions: list[Obj], labels: dict[str, str]
) -> None:
    """A List by the implied labels fetches a superset of what the selector admits
    (what compose-model-deployment asks Crossplane for relies on it)."""
    selector = compile_label_selector(
        parse_label_selector({"matchLabels": match_labels, "matchExpressions": expressions})
    )
    implied = selector.implied_labels()
    if selector.matches(labels):
        assert all(labels.get(key) == value for key, value in implied.items())
    assert set(match_labels) <= set(implied)


def test_implied_labels_are_the_equalities() -> None:
    selector = compile_label_selector(
        parse_label_selector(
            {
                "matchLabels": {"tier": "prod"},
                "matchExpressions": [
                    {"key": "region", "operator": "In", "values": ["us-east"]},
                    {"key": "gpu", "operator": "In", "values": ["h100", "h200"]},
                    {"key": "zone", "operator": "Exists"},
                ],
            }
        )
    )
    assert selector.implied_labels() == {"tier": "prod", "region": "us-east"}
