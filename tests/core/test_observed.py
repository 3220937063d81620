"""Conditions and provider read-backs, read through the generated models from
objects of any shape, never raising; and read nowhere else."""

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplane_models import ModelReplica

from modelplane.core.issues import parse_object
from modelplane.core.observed import (
    at_provider,
    condition_is,
    conditions,
    conditions_problem,
    find_condition,
    read_back,
)

READY = {"type": "Ready", "status": "True", "reason": "Available"}
ROOT = Path(__file__).resolve().parents[2]


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
        # An entry that does not read is no condition; the next of its type is.
        ({"status": {"conditions": [{"type": "Ready", "status": 1}, READY]}}, READY),
    ],
)
def test_find_condition(obj: dict[str, Any] | None, found: dict[str, Any] | None) -> None:
    got = find_condition(obj, "Ready")
    assert (got.model_dump(exclude_none=True) if got else None) == found


def test_condition_is() -> None:
    obj = {"status": {"conditions": [READY]}}
    assert condition_is(obj, "Ready", "True")
    assert not condition_is(obj, "Ready", "False")
    assert not condition_is(obj, "Synced", "True")


def test_a_struct_generation_reads_as_an_integer() -> None:
    obj = {"status": {"conditions": [{**READY, "observedGeneration": 3.0}]}}
    (read,) = conditions(obj)
    assert read.observedGeneration == 3


@pytest.mark.parametrize(
    ("status", "problem"),
    [
        (None, None),
        ({}, None),
        ({"conditions": [READY]}, None),
        ("Ready", "status is not an object"),
        ({"conditions": "Ready"}, "status.conditions is not a list of conditions"),
        ({"conditions": [["Ready"]]}, "status.conditions[0] is not a condition"),
        ({"conditions": [READY, {"type": 7, "status": "True"}]}, "status.conditions[1].type"),
        ({"conditions": [{"type": "Ready"}]}, "status.conditions[0].status is missing"),
        ({"conditions": [{**READY, "observedGeneration": "1"}]}, "observedGeneration is not"),
    ],
)
def test_conditions_problem_names_the_field(status: Any, problem: str | None) -> None:
    found = conditions_problem(None if status is None else {"status": status})
    assert (found is None) == (problem is None)
    if problem is not None:
        assert found is not None and problem in found


def test_an_unreadable_condition_does_not_make_its_object_unreadable() -> None:
    """Crossplane and controllers write conditions, not users: the object still reads."""
    replica = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "r"},
        "status": {"conditions": [{"type": 7}, READY], "url": "http://r"},
    }
    read = parse_object(ModelReplica, replica)
    assert read.status is not None and read.status.conditions is not None
    assert [c.type for c in read.status.conditions] == ["Ready"]
    assert read.status.url == "http://r"


@pytest.mark.parametrize(
    ("observed", "manifest"),
    [
        ({"status": {"atProvider": {"manifest": {"kind": "Gateway"}}}}, {"kind": "Gateway"}),
        # A malformed condition beside the read-back does not hide it.
        (
            {"status": {"atProvider": {"manifest": {"kind": "X"}}, "conditions": "no"}},
            {"kind": "X"},
        ),
        ({"status": {"atProvider": {"manifest": {}}}}, None),
        ({"status": {"atProvider": {"manifest": "text"}}}, None),
        ({"status": {"atProvider": "text"}}, None),
        ({"status": "text"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_read_back(observed: dict[str, Any] | None, manifest: dict[str, Any] | None) -> None:
    assert read_back(observed) == manifest


def test_at_provider() -> None:
    assert at_provider({"status": {"atProvider": {"endpoint": "https://e"}}}) == {
        "endpoint": "https://e"
    }
    assert at_provider({"status": {"atProvider": []}}) == {}
    assert at_provider(None) == {}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)
_keys = st.sampled_from(["status", "conditions", "atProvider", "manifest", "type", "Ready"])
_shaped = st.recursive(
    _json, lambda inner: st.dictionaries(_keys, inner, max_size=3), max_leaves=12
)


@given(st.dictionaries(_keys, _shaped, max_size=3))
def test_reading_any_object_never_raises(obj: dict[str, Any]) -> None:
    conditions(obj)
    find_condition(obj, "Ready")
    problem = conditions_problem(obj)
    # What the reader skips, the problem names: no problem, nothing skipped.
    status = obj.get("status")
    listed = status.get("conditions") if isinstance(status, dict) else None
    if problem is None and isinstance(listed, list):
        assert len(conditions(obj)) == len(listed)  # pyright: ignore[reportUnknownArgumentType]
    read_back(obj)
    at_provider(obj)


# Reading a condition, a provider's read-back or a workload's status counts by hand,
# as text: subscripting or .get() of "conditions" or of a status count, any string
# "atProvider", or a count dug out of a status by a variable name.
_HAND_READ = re.compile(
    r"""\[["'](conditions|\w+Replicas)["']\]|\.get\(["'](conditions|\w+Replicas)["']"""
    r"""|["']atProvider["']|status\.get\(field"""
)


def _sources() -> list[Path]:
    roots = [ROOT / "src" / "modelplane", *sorted((ROOT / "functions").glob("*/src"))]
    return sorted(p for root in roots for p in root.rglob("*.py"))


def test_no_function_reads_a_condition_or_a_read_back_by_hand() -> None:
    """The runtime reads them in one module, through the generated models."""
    reader = ROOT / "src" / "modelplane" / "core" / "observed.py"
    sources = _sources()
    assert reader in sources and len(sources) > 100
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources
        if path != reader
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if _HAND_READ.search(line)
    ]
    assert found == []


def test_the_hand_read_pattern_catches_hand_reads() -> None:
    for line in (
        'status["conditions"]',
        "status.get('conditions')",
        'mapping(status.get("atProvider"))',
        'fields.get("conditions")',
        'status.get("readyReplicas")',
        'observed["status"]["availableReplicas"]',
        "have = count(status.get(field_name), 0)",
    ):
        assert _HAND_READ.search(line), line
    assert not _HAND_READ.search('"conditions": [READY]')
    assert not _HAND_READ.search('"readyReplicas": n,')
