"""What the engine shares instead of copying is never changed in place.

The world stores a copy of every object it is given and hands out that copy to
every reader; admission hands out its kept answers below their top level; the
providers keep the spec and status they last saw by reference. All of that is
safe only if no reader changes a shared object in place, so a real render of the
repository's examples is watched: every object stored and every answer kept is
snapshotted when it is made and compared with its snapshot at the end.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelplane_cli.render import SchemaAdmission, output, read_documents, render
from modelplane_cli.render.world import ObjectKey, View, World

from .test_examples import EXAMPLES, _ready_to_run  # pyright: ignore[reportPrivateUsage]


def _watched(snapshots: list[tuple[Any, Any]], put: Any) -> Any:
    def recording(key: Any, value: Any) -> None:
        snapshots.append((value, copy.deepcopy(value)))
        put(key, value)

    return recording


def test_a_render_changes_nothing_it_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    apis, registry = _ready_to_run()
    admission = SchemaAdmission.from_files(apis.definition_files)
    snapshots: list[tuple[Any, Any]] = []
    for memo in (admission._admitted, admission._statuses):  # pyright: ignore[reportPrivateUsage]
        monkeypatch.setattr(memo, "put", _watched(snapshots, memo.put))
    original_put = World.put

    def recording_put(self: World, obj: View) -> bool:
        changed = original_put(self, obj)
        stored = self.get(ObjectKey.of(obj))
        snapshots.append((stored, copy.deepcopy(stored)))
        return changed

    monkeypatch.setattr(World, "put", recording_put)

    result = render(read_documents([str(EXAMPLES)]), apis, registry, admission, in_process=True)
    text = output.to_yaml(result)

    assert result.ok, result.errors
    assert len(snapshots) > 100
    assert [before for now, before in snapshots if now != before] == []
    # Writing the output changes nothing either: rendering it again is the same text.
    assert output.to_yaml(result) == text
