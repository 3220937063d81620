"""Conditions read from objects of any shape, never raising."""

from typing import Any

import pytest

from modelplane.core.observed import condition_is, find_condition

READY = {"type": "Ready", "status": "True", "reason": "Available"}


@pytest.mark.parametrize(
    ("obj", "found"),
    [
        ({"status": {"conditions": [{"type": "Synced", "status": "True"}, READY]}}, READY),
        ({"status": {"conditions": [{"type": "Synced", "status": "True"}]}}, None),
        ({"status": {}}, None),
        ({}, None),
        (None, None),
        ({"status": "broken"}, None),
        ({"status": {"conditions": "broken"}}, None),
        ({"status": {"conditions": ["broken", READY]}}, READY),
    ],
)
def test_find_condition(obj: dict[str, Any] | None, found: dict[str, Any] | None) -> None:
    assert find_condition(obj, "Ready") == found


def test_condition_is() -> None:
    obj = {"status": {"conditions": [READY]}}
    assert condition_is(obj, "Ready", "True")
    assert not condition_is(obj, "Ready", "False")
    assert not condition_is(obj, "Synced", "True")
