"""The vocabulary never names a condition type Crossplane reserves for itself."""

import re
from pathlib import Path

from modelplane.core import vocabulary
from modelplane.core.vocabulary import (
    CONDITION_TYPES,
    RESERVED_CONDITION_TYPES,
    ConditionType,
    Reason,
)


def _constants(namespace: object) -> dict[str, str]:
    return {
        name: value
        for name, value in vars(namespace).items()
        if name.isupper() and isinstance(value, str)
    }


def test_no_condition_type_is_reserved() -> None:
    assert CONDITION_TYPES
    assert not CONDITION_TYPES & RESERVED_CONDITION_TYPES


def test_no_word_of_the_vocabulary_is_a_reserved_type() -> None:
    # A constant spelling `Healthy` would be one import away from being set as a condition.
    words = {**_constants(vocabulary), **_constants(ConditionType), **_constants(Reason)}
    assert {name: v for name, v in words.items() if v in RESERVED_CONDITION_TYPES} == {}


def test_condition_types_are_camel_case_words() -> None:
    for condition_type in CONDITION_TYPES:
        assert re.fullmatch(r"(?:[A-Z][a-z]+)+", condition_type), condition_type


def test_the_reachability_condition_is_reachable() -> None:
    assert ConditionType.REACHABLE == "Reachable"
    assert ConditionType.REACHABLE in CONDITION_TYPES


ROOT = Path(__file__).resolve().parents[2]


def test_every_condition_type_is_in_the_design_table() -> None:
    """design/vocabulary.md lists each kind's conditions: one a function sets must be there."""
    table = (ROOT / "design" / "vocabulary.md").read_text()
    assert sorted(t for t in CONDITION_TYPES if f"`{t}`" not in table) == []


def test_every_reason_is_documented() -> None:
    """A condition or Warning event reason a user can see is named in docs/.
    InternalError is the one a function never answers to input it can read."""
    docs = "".join(page.read_text() for page in (ROOT / "docs").rglob("*.md"))
    words = set(_constants(Reason).values()) - {Reason.INTERNAL_ERROR}
    assert sorted(w for w in words if w not in docs) == []
