"""Editing a running fleet: round trips, garbage collection, fatal results, adoption."""

from __future__ import annotations

from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from crossplane.function import response

from modelplane_cli import yamlio
from modelplane_cli.render import output, parse_stream

from .support import (
    PARENT,
    FakeFunction,
    assert_same_world,
    condition,
    default_runners,
    find,
    one,
    render_text,
)


def test_round_trip_of_yaml_output_is_a_fixed_point(apis_dir: Path) -> None:
    first = render_text(apis_dir, PARENT)
    text = output.to_yaml(first)

    second = render_text(apis_dir, text)

    assert second.converged
    assert second.rounds == 1
    assert_same_world(output.to_yaml(second), text)


def test_round_trip_of_json_output_is_a_fixed_point(apis_dir: Path) -> None:
    first = render_text(apis_dir, PARENT)
    text = output.to_json(first)

    second = render_text(apis_dir, text)

    assert second.rounds == 1
    assert_same_world(output.to_json(second), text)


def test_scaling_down_an_edited_output_collects_what_is_no_longer_desired(
    apis_dir: Path,
) -> None:
    running = output.to_yaml(render_text(apis_dir, PARENT))
    edited = running.replace("children: 2", "children: 1")
    assert edited != running

    result = render_text(apis_dir, edited)

    assert result.ok
    assert [c["metadata"]["name"] for c in find(result, "XChild")] == ["web-0"]
    # The child's own Object goes with it: it is owned by the collected child.
    objects = find(result, "Object")
    assert len(objects) == 1
    assert objects[0]["metadata"]["ownerReferences"][0]["name"] == "web-0"


def test_removing_a_composite_from_the_documents_collects_its_tree(apis_dir: Path) -> None:
    running = render_text(apis_dir, PARENT)
    remaining = [o for o in running.objects if o["kind"] != "XParent"]
    text = output.to_yaml(
        type(running)(objects=remaining, events=[], reports=[], converged=True, rounds=1)
    )

    result = render_text(apis_dir, text)

    assert result.objects == []


def test_fatal_result_applies_and_deletes_nothing(apis_dir: Path) -> None:
    running = output.to_yaml(render_text(apis_dir, PARENT))

    class Refusing(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            response.warning(rsp, "looking closely")
            response.fatal(rsp, "children must not shrink")

    edited = running.replace("children: 2", "children: 1")
    result = render_text(apis_dir, edited, {**default_runners(), "fn-parent": Refusing()})

    assert not result.ok
    assert len(find(result, "XChild")) == 2
    assert len(find(result, "Object")) == 2
    parent = one(result, "XParent")
    message = (
        'cannot compose resources: pipeline step "step-0" returned a fatal result: '
        "children must not shrink"
    )
    assert condition(parent, "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": message,
    }
    # Conditions the pipeline did not get to report are no longer known.
    assert condition(parent, "ChildrenReady")["status"] == "Unknown"
    assert condition(parent, "ChildrenReady")["reason"] == "FatalError"
    # Ready is left as it was: the fatal result says nothing about readiness.
    assert condition(parent, "Ready")["status"] == "True"
    assert parent["status"]["readyChildren"] == 2
    warnings = [e["message"] for e in result.events if e["type"] == "Warning"]
    # `Reconcile` records the compose error before `handleCommonCompositionResult`
    # reports the results that came before the fatal one.
    assert warnings == [message, 'Pipeline step "step-0": looking closely']
    assert any(message in e for e in result.errors)


def test_an_object_marked_unhealthy_in_the_input_keeps_its_status(apis_dir: Path) -> None:
    running = output.to_yaml(render_text(apis_dir, PARENT))
    # A provider that last reported the Object unavailable: the first Object's
    # Ready condition is the first "status: 'True'" after its conditions key.
    head, _, tail = running.partition("\nkind: Object\n")
    obj, sep, rest = tail.partition("---\n")
    broken = obj.replace(
        "  - reason: Available\n    status: 'True'\n    type: Ready",
        "  - reason: Unavailable\n    status: 'False'\n    type: Ready",
    )
    assert broken != obj

    result = render_text(apis_dir, head + "\nkind: Object\n" + broken + sep + rest)

    assert result.converged
    parent = one(result, "XParent")
    assert condition(parent, "Ready")["message"] == "Unready resources: child-0"
    assert condition(one(result, "XChild", "web-0"), "Ready")["status"] == "False"


def test_composed_documents_without_owner_references_are_adopted_by_their_root(
    apis_dir: Path,
) -> None:
    running = render_text(apis_dir, PARENT)
    text = output.to_yaml(running)
    stripped = []
    for doc in parse_stream(text, "rendered"):
        if doc.obj["kind"] == "XChild":
            del doc.obj["metadata"]["ownerReferences"]
        stripped.append(doc.obj)

    result = render_text(apis_dir, yamlio.dump_all(stripped))

    assert result.ok, result.errors
    assert_same_world(output.to_yaml(result), text)


def test_a_controlled_object_without_a_resource_name_is_an_error(apis_dir: Path) -> None:
    running = render_text(apis_dir, PARENT)
    broken = []
    for obj in running.objects:
        if obj["kind"] == "XChild" and obj["metadata"]["name"] == "web-1":
            broken.append({**obj, "metadata": {**obj["metadata"], "annotations": {}}})
        else:
            broken.append(obj)

    result = render_text(apis_dir, yamlio.dump_all(broken), max_rounds=1)

    synced = condition(one(result, "XParent"), "Synced")
    assert synced["message"] == (
        "cannot compose resources: cannot get existing composed resources: encountered "
        'composed resource without required "crossplane.io/composition-resource-name" annotation'
    )


def test_a_paused_composite_is_left_alone(apis_dir: Path) -> None:
    running = output.to_yaml(render_text(apis_dir, PARENT))
    paused = running.replace(
        "kind: XParent\nmetadata:\n",
        "kind: XParent\nmetadata:\n  annotations: {crossplane.io/paused: 'true'}\n",
    ).replace("children: 2", "children: 0")

    result = render_text(apis_dir, paused)

    assert result.ok
    assert len(find(result, "XChild")) == 2
    assert condition(one(result, "XParent"), "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcilePaused",
        "message": "Reconciliation (including deletion) is paused via the pause annotation",
    }
    # The event carries the composite reconciler's own reason and words.
    paused_events = [
        (e["type"], e["reason"], e["message"])
        for e in result.events
        if e["involvedObject"]["kind"] == "XParent" and "paused" in e["message"]
    ]
    assert paused_events == [
        ("Normal", "ReconciliationPaused", "Reconciliation is paused via the pause annotation")
    ]
