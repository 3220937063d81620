"""The vocabulary never names a condition type Crossplane reserves for itself."""

import re

from modelplane.core import vocabulary
from modelplane.core.vocabulary import CONDITION_TYPES, RESERVED_CONDITION_TYPES, Reason


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
    words = {**_constants(vocabulary), **_constants(Reason)}
    assert {name: v for name, v in words.items() if v in RESERVED_CONDITION_TYPES} == {}


def test_condition_types_are_camel_case_words() -> None:
    for condition_type in CONDITION_TYPES:
        assert re.fullmatch(r"(?:[A-Z][a-z]+)+", condition_type), condition_type


def test_the_reachability_condition_is_reachable() -> None:
    assert vocabulary.REACHABLE == "Reachable"
    assert vocabulary.REACHABLE in CONDITION_TYPES
