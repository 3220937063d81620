"""A composite whose last run wrote nothing, and whose reads are unchanged since, is not
reconciled again: its report is reused, and the output is byte for byte the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modelplane_cli.render import (
    Apis,
    FunctionRegistry,
    SchemaAdmission,
    default_apis_dir,
    output,
    read_documents,
    render,
    wire,
)
from modelplane_cli.render.reads import Reads, RecordingWorld
from modelplane_cli.render.runners import InProcessFunctions
from modelplane_cli.render.world import ObjectKey, World

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOURCES = [str(EXAMPLES / "catalog"), str(EXAMPLES / "fleet")]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = InProcessFunctions.run

    async def run(self: Any, name: str, request: bytes) -> Any:
        calls.append(name)
        return await real(self, name, request)

    monkeypatch.setattr(InProcessFunctions, "run", run)
    return calls


def _render() -> tuple[str, str]:
    apis = Apis.load(default_apis_dir())
    admission = SchemaAdmission.from_files(apis.definition_files)
    result = render(read_documents(SOURCES), apis, FunctionRegistry(), admission, in_process=True)
    assert result.ok, result.errors
    return output.to_yaml(result), output.to_json(result)


def test_skipping_unchanged_composites_changes_no_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    skipping = _render()
    skipped_calls = len(calls)
    calls.clear()
    monkeypatch.setattr(Reads, "unchanged", lambda self, world: False)
    every_time = _render()
    assert skipping == every_time
    # The last round alone re-runs every composite for nothing without the skip.
    assert skipped_calls < len(calls)


def _world() -> World:
    return World(
        [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "n"}},
        ]
    )


def test_a_read_object_that_changes_invalidates() -> None:
    world = _world()
    recording = RecordingWorld(world)
    recording.get(ObjectKey("v1", "ConfigMap", "n", "a"))
    assert recording.reads.unchanged(world)
    world.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "b", "namespace": "n"},
            "data": {},
        }
    )
    assert recording.reads.unchanged(world)  # b was not read
    world.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "n"},
            "data": {},
        }
    )
    assert not recording.reads.unchanged(world)


def test_a_query_whose_answer_changes_invalidates() -> None:
    world = _world()
    recording = RecordingWorld(world)
    assert len(recording.select("v1", "ConfigMap", namespace="n")) == 2
    world.put({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}})
    assert recording.reads.unchanged(world)
    world.put(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}
    )
    assert not recording.reads.unchanged(world)


def test_an_absent_object_that_appears_invalidates() -> None:
    world = _world()
    recording = RecordingWorld(world)
    assert ObjectKey("v1", "Secret", "n", "s") not in recording
    assert recording.reads.unchanged(world)
    world.put({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}})
    assert not recording.reads.unchanged(world)


def test_listing_the_whole_world_invalidates_on_any_change() -> None:
    world = _world()
    recording = RecordingWorld(world)
    recording.all_keys()
    assert recording.reads.unchanged(world)
    world.put({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}})
    assert not recording.reads.unchanged(world)


def _cm(name: str, namespace: str = "n", **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        **fields,
    }


def test_a_selected_object_that_changes_invalidates_though_the_answer_is_the_same() -> None:
    world = _world()
    recording = RecordingWorld(world)
    assert len(recording.select("v1", "ConfigMap", namespace="n")) == 2
    world.put(_cm("elsewhere", namespace="other"))  # the type moved; the answer did not
    assert recording.reads.unchanged(world)
    world.put(_cm("b", data={"k": "v"}))
    assert not recording.reads.unchanged(world)


def test_serialized_selects_are_recorded_as_selects() -> None:
    world = _world()
    recording = RecordingWorld(world)
    keys, answer = recording.select_resources("v1", "ConfigMap", namespace="n")
    assert [k.name for k in keys] == ["a", "b"]
    assert answer == wire.resources([world.serialized(k) for k in keys])
    assert world.select_resources("v1", "ConfigMap", namespace="n")[1] is answer  # kept
    world.put(_cm("a", data={"k": "v"}))
    assert not recording.reads.unchanged(world)
    fresh = world.select_resources("v1", "ConfigMap", namespace="n")[1]
    assert fresh != answer and fresh == wire.resources([world.serialized(k) for k in keys])
