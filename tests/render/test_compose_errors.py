"""What stops a compose and what is one resource's refused apply, as Crossplane v2.3's
`FunctionComposer.Compose` decides: only its own checks (the name, scope, a foreign
controller reference) return an error, with an empty result; the API server checks
labels and annotations on the apply, an Invalid of that resource alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from crossplane.function import resource

from modelplane_cli.schema.errors import go_quote

from .support import PARENT, ParentRunner, condition, default_runners, find, one, render_text


class Labelled(ParentRunner):
    """The parent's children, plus ConfigMaps named and labelled as the test says."""

    def __init__(self, maps: dict[str, dict[str, Any]]) -> None:
        super().__init__()
        self.maps = maps

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        for key, meta in self.maps.items():
            resource.update(
                rsp.desired.resources[key],
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": key}},
            )
            rsp.desired.resources[key].ready = fnv1.READY_TRUE


def _render(apis_dir: Path, maps: dict[str, dict[str, Any]]) -> Any:
    return render_text(apis_dir, PARENT, {**default_runners(), "fn-parent": Labelled(maps)})


def _parent_events(result: Any) -> set[tuple[str, str]]:
    return {
        (e["type"], e["message"]) for e in result.events if e["involvedObject"]["kind"] == "XParent"
    }


def test_a_label_the_api_server_refuses_fails_that_apply_alone(apis_dir: Path) -> None:
    result = _render(
        apis_dir,
        {"bad": {"name": "bad", "labels": {"tier": "not valid!"}}, "ok": {"name": "ok"}},
    )

    assert one(result, "ConfigMap", "ok")
    assert find(result, "ConfigMap", "bad") == []
    assert [c["metadata"]["name"] for c in find(result, "XChild")] == ["web-0", "web-1"]
    parent = one(result, "XParent")
    assert condition(parent, "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": "Unsynced resources: bad",
    }
    assert condition(parent, "ChildrenReady")["status"] == "True"
    assert "bad" in [r["name"] for r in parent["spec"]["crossplane"]["resourceRefs"]]
    assert any(
        kind == "Warning"
        and message.startswith(
            'cannot apply composed resource "bad": ConfigMap "bad" is invalid: metadata.labels: '
            'Invalid value: "not valid!"'
        )
        for kind, message in _parent_events(result)
    )


def test_an_invalid_name_stops_the_compose_with_only_its_own_error(apis_dir: Path) -> None:
    result = _render(
        apis_dir, {"a": {"name": "Bad_A"}, "b": {"name": "Bad_B"}, "ok": {"name": "ok"}}
    )

    assert find(result, "ConfigMap") == []
    assert find(result, "XChild") == []
    message = (
        'cannot compose resources: cannot apply composed resource "a" because it has an '
        'invalid name "Bad_A". Must be a valid RFC 1123 subdomain name.'
    )
    parent = one(result, "XParent")
    assert condition(parent, "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": message,
    }
    # `CompositionResult{}`: none of the function's conditions or results, one event.
    assert condition(parent, "ChildrenReady") == {}
    assert _parent_events(result) == {("Warning", message)}


def test_a_foreign_controller_reference_stops_the_compose(apis_dir: Path) -> None:
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-1", "controller": True}
    result = _render(apis_dir, {"owned": {"name": "owned", "ownerReferences": [owner]}})

    message = (
        'cannot compose resources: cannot render metadata for composed resource "owned": '
        "cannot set controller reference: owned is already controlled by Pod p (UID u-1)"
    )
    assert condition(one(result, "XParent"), "Synced")["message"] == message
    assert find(result, "XChild") == []


def test_a_compose_error_turns_every_custom_condition_unknown(apis_dir: Path) -> None:
    # The composite as a control plane left it, the function's condition set.
    observed = PARENT + (
        "status:\n  conditions:\n  - {type: ChildrenReady, status: 'True', reason: AllReady}\n"
    )
    result = render_text(
        apis_dir, observed, {**default_runners(), "fn-parent": Labelled({"a": {"name": "A"}})}
    )

    # `Reconcile` sees no condition types in `CompositionResult{}`.
    assert condition(one(result, "XParent"), "ChildrenReady") == {
        "type": "ChildrenReady",
        "status": "Unknown",
        "reason": "FatalError",
        "message": "A fatal error occurred before the status of this condition could be "
        "determined.",
    }


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        # What Go's fmt %q (strconv.Quote) gives for each.
        ("plain", '"plain"'),
        ('say "hi" \\ there', '"say \\"hi\\" \\\\ there"'),
        ("tab\tnew\nline", '"tab\\tnew\\nline"'),
        ("bell\a vt\v", '"bell\\a vt\\v"'),
        ("esc\x1b nul\x00 del\x7f", '"esc\\x1b nul\\x00 del\\x7f"'),
        ("nbsp\u00a0 ls\u2028 zwsp\u200b", '"nbsp\\u00a0 ls\\u2028 zwsp\\u200b"'),
        ("private\U000f0000", '"private\\U000f0000"'),
        ("café ☃ 模型", '"café ☃ 模型"'),
    ],
)
def test_names_are_quoted_as_go_s_percent_q(name: str, quoted: str) -> None:
    assert go_quote(name) == quoted
