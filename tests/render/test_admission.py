"""Composites are defaulted and validated by their XRDs, as the API server would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from crossplane.function import resource

from modelplane_cli.render import Apis, SchemaAdmission, output
from modelplane_cli.render.failures import ERROR, failures
from modelplane_cli.schema.errors import FieldError
from modelplane_cli.schema.resource import Schema

from .support import (
    PARENT,
    ParentRunner,
    assert_same_world,
    condition,
    default_runners,
    find,
    one,
    render_text,
)


@pytest.fixture
def admission(apis_dir: Path) -> SchemaAdmission:
    return SchemaAdmission.from_files(Apis.load(apis_dir).definition_files)


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (
            "{children: 11}",
            "spec.children: Invalid value: 11: "
            "spec.children in body should be less than or equal to 10",
        ),
        ("{}", "spec.children: Required value"),
        (
            "{children: two}",
            'spec.children: Invalid value: "string": '
            'spec.children in body must be of type integer: "string"',
        ),
        (
            "{children: 1, colour: red}",
            'spec.colour: unknown field "spec.colour"',
        ),
    ],
)
def test_invalid_input_composites_are_rejected_with_the_field_path(
    apis_dir: Path, admission: SchemaAdmission, spec: str, error: str
) -> None:
    bad = PARENT.replace("name: web,", "name: bad,").replace("{children: 2}", spec)
    result = render_text(apis_dir, PARENT + "---" + bad, admission=admission)

    assert not result.ok
    assert result.input_errors == [f'<test>:7: XParent.example.org "bad" is invalid: {error}']
    assert find(result, "XParent", "bad") == []
    # The rest of the world is still rendered.
    assert condition(one(result, "XParent", "web"), "Ready")["status"] == "True"


def test_input_and_composed_composites_are_defaulted(
    apis_dir: Path, admission: SchemaAdmission
) -> None:
    class NoReplicas(ParentRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            for name in rsp.desired.resources:
                child = resource.struct_to_dict(rsp.desired.resources[name].resource)
                del child["spec"]["replicas"]
                rsp.desired.resources[name].resource.Clear()
                resource.update(rsp.desired.resources[name], child)

    runners = {**default_runners(), "fn-parent": NoReplicas()}
    result = render_text(apis_dir, PARENT, runners, admission=admission)

    assert result.ok, result.errors
    assert one(result, "XParent")["spec"]["image"] == "engine:v1"
    assert [c["spec"]["replicas"] for c in find(result, "XChild")] == [1, 1]


def test_an_invalid_composed_composite_is_an_error_on_its_parent(
    apis_dir: Path, admission: SchemaAdmission
) -> None:
    text = PARENT.replace("{children: 2}", '{children: 2, image: ""}')

    result = render_text(apis_dir, text, admission=admission)

    # Crossplane reports each refused apply on the resource and carries on: the
    # reconcile succeeds, the parent is not Synced, and the render fails at
    # --fail-on error.
    assert find(result, "XChild") == []
    synced = condition(one(result, "XParent"), "Synced")
    assert synced == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": "Unsynced resources: child-0, child-1",
    }
    warnings = [
        e["message"]
        for e in result.events
        if e["type"] == "Warning" and e["message"].startswith("cannot apply")
    ]
    assert len(warnings) == 2
    assert warnings[0].startswith(
        'cannot apply composed resource "child-0": '
        'XChild.example.org "web-0" is invalid: spec.image: Invalid value: "": '
    )
    assert "XParent team-a/web: Synced=False: Unsynced resources: child-0, child-1" in failures(
        result, ERROR, ["XParent", "XChild"]
    )
    invalid = [e["message"] for e in result.events if "is invalid" in e["message"]]
    assert len(invalid) == 2


def test_rendered_output_is_admitted_again_unchanged(
    apis_dir: Path, admission: SchemaAdmission
) -> None:
    text = output.to_yaml(render_text(apis_dir, PARENT, admission=admission))

    again = render_text(apis_dir, text, admission=admission)

    assert again.ok, again.errors
    assert again.rounds == 1
    assert_same_world(output.to_yaml(again), text)


def test_a_body_admitted_again_answers_the_same_and_callers_own_its_top_level(
    admission: SchemaAdmission, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[object] = []
    original = Schema.admit

    def counting(self: Schema, obj: dict[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
        checked.append(obj)
        return original(self, obj)

    monkeypatch.setattr(Schema, "admit", counting)
    body = {
        "apiVersion": "example.org/v1",
        "kind": "XChild",
        "metadata": {"name": "c"},
        "spec": {"colour": "red"},
    }
    first, first_errors = admission.admit({**body, "status": {"n": 1}})
    expected = list(first_errors)
    # What a caller may change: the top level and metadata's (`Admission`).
    first["spec"] = {**first["spec"], "changed": True}
    first["metadata"]["uid"] = "mine"
    first_errors.append("mine")
    again, again_errors = admission.admit({**body, "status": {"n": 2}})

    assert 'spec.colour: unknown field "spec.colour"' in expected
    assert again["status"] == {"n": 2}
    assert "changed" not in again["spec"] and again["spec"]["replicas"] == 1
    assert "uid" not in again["metadata"]
    assert again_errors == expected
    assert len(checked) == 1  # the same body, whatever its status, is checked once


def _status_with_spec(schema: Schema, obj: dict[str, Any]) -> tuple[Any, list[str]]:
    """What admit_status answered when it always sent the spec along (the oracle)."""
    body = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace")},
        "spec": obj.get("spec"),
        "status": obj.get("status"),
    }
    pruned, refused = schema.prune_and_validate(body)
    errors = [
        str(e)
        for e in refused
        if e.path.startswith("status")
        and not e.message.startswith("unknown field")
        and not (e.path.endswith("].lastTransitionTime") and e.message == "Required value")
    ]
    return pruned.get("status"), errors


_SPECS: list[Any] = [None, {}, {"bogus": 1}, {"replicas": "many", "children": -1}]
_STATUSES: list[Any] = [
    None,
    {},
    {"bogus": True},
    {"conditions": [{"type": "Ready", "status": "Maybe"}]},
    {"conditions": "none"},
]


def test_a_status_is_judged_the_same_with_or_without_its_spec() -> None:
    """admit_status leaves the spec out where the schema says it cannot matter."""
    from modelplane_cli.render import default_apis_dir

    apis = Apis.load(default_apis_dir())
    admission = SchemaAdmission.from_files(apis.definition_files)
    registry = admission._registry  # pyright: ignore[reportPrivateUsage]
    alone = [k for k in registry.kinds() if registry.get(*k).status_stands_alone]  # pyright: ignore[reportOptionalMemberAccess]
    assert alone and len(alone) < len(registry.kinds())  # both paths are exercised
    for api_version, kind in registry.kinds():
        schema = registry.get(api_version, kind)
        assert schema is not None
        for spec in _SPECS:
            for status in _STATUSES:
                obj = {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {"name": "a", "namespace": "ns", "uid": "u"},
                    "spec": spec,
                    "status": status,
                }
                if status is None:
                    continue
                assert admission.admit_status(obj) == _status_with_spec(schema, obj), obj
