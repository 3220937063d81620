"""The apply half of a reconcile, as Crossplane v2.3's `FunctionComposer.Compose` runs
it: each composed resource applied on its own (one the API server refuses is
reported on itself and does not stop the others), and the composite's status
checked against its XRD as server-side apply would.
"""

from __future__ import annotations

from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from crossplane.function import resource

from modelplane_cli.render import SchemaAdmission

from .support import (
    PARENT,
    FakeFunction,
    ParentRunner,
    condition,
    config_map,
    default_runners,
    find,
    one,
    render_text,
    write_apis,
)

_STATUS_SCHEMA = """
            required: [children]
            properties:
              children: {type: integer, minimum: 0, maximum: 10}
              image: {type: string, default: "engine:v1"}
          status:
            type: object
            properties:
              readyChildren: {type: integer, maximum: 1}
"""


class HalfInvalid(ParentRunner):
    """Child 0 with an image its schema refuses; child 1 valid; a ConfigMap beside."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        body = resource.struct_to_dict(rsp.desired.resources["child-0"].resource)
        body["spec"]["image"] = ""
        resource.update(rsp.desired.resources["child-0"], body)
        config_map(rsp, "beside", {"k": "beside"})


def test_one_refused_manifest_does_not_stop_the_others(tmp_path: Path) -> None:
    apis = write_apis(
        tmp_path, parent_properties=_STATUS_SCHEMA.replace("maximum: 1", "maximum: 5")
    )
    admission = SchemaAdmission.from_files(sorted(apis.rglob("definition.yaml")))
    runners = {**default_runners(), "fn-parent": HalfInvalid()}

    result = render_text(apis, PARENT, runners, admission=admission)

    assert [c["metadata"]["name"] for c in find(result, "XChild")] == ["web-1"]
    assert one(result, "ConfigMap", "beside")
    parent = one(result, "XParent")
    assert condition(parent, "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": "Unsynced resources: child-0",
    }
    # The status is still written, and the refused resource is still referenced.
    assert parent["status"]["readyChildren"] == 1
    assert "web-0" in [r["name"] for r in parent["spec"]["crossplane"]["resourceRefs"]]
    messages = {(e["type"], e["message"]) for e in result.events}
    assert ("Normal", 'Composed resource "child-0" is not yet valid') in messages
    assert any(
        kind == "Warning"
        and message.startswith(
            'cannot apply composed resource "child-0": XChild.example.org "web-0" is invalid: '
            'spec.image: Invalid value: "": '
        )
        for kind, message in messages
    )
    assert result.unsynced == ["XParent team-a/web: Synced=False: Unsynced resources: child-0"]


def test_a_status_its_schema_refuses_is_not_written(tmp_path: Path) -> None:
    apis = write_apis(tmp_path, parent_properties=_STATUS_SCHEMA)
    admission = SchemaAdmission.from_files(sorted(apis.rglob("definition.yaml")))

    result = render_text(apis, PARENT, admission=admission)

    parent = one(result, "XParent")
    # Both children become ready, so the function writes readyChildren: 2, which
    # the schema refuses: the last accepted status stays, Synced with it.
    assert parent["status"]["readyChildren"] <= 1
    assert condition(parent, "Synced")["status"] == "True"
    message = (
        "cannot compose resources: cannot apply composite resource status: "
        'XParent.example.org "web" is invalid: status.readyChildren: Invalid value: 2: '
        "status.readyChildren in body should be less than or equal to 1"
    )
    assert [r.error for r in result.reports if r.key.kind == "XParent"] == [message]
    assert ("Warning", message) in {(e["type"], e["message"]) for e in result.events}


def test_unknown_status_fields_are_pruned_not_refused(tmp_path: Path) -> None:
    schema = _STATUS_SCHEMA.replace("maximum: 1", "maximum: 5")
    apis = write_apis(tmp_path, parent_properties=schema)
    admission = SchemaAdmission.from_files(sorted(apis.rglob("definition.yaml")))

    class Extra(ParentRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            status = resource.struct_to_dict(rsp.desired.composite.resource)["status"]
            resource.update(rsp.desired.composite, {"status": {**status, "undeclared": "x"}})

    result = render_text(
        apis, PARENT, {**default_runners(), "fn-parent": Extra()}, admission=admission
    )

    assert result.ok, result.errors
    status = one(result, "XParent")["status"]
    assert status["readyChildren"] == 2
    assert "undeclared" not in status


def test_unready_resources_get_an_event_each_and_success_none(tmp_path: Path) -> None:
    # v2.3's reconciler records `Composed resource %q is not yet ready` per unready
    # resource (readiness only as the function reports it) and only logs
    # "Successfully composed resources".
    class HalfReady(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            config_map(rsp, "ready", {"k": "v"})
            config_map(rsp, "unspecified", {"k": "v"})
            rsp.desired.resources["unspecified"].ready = fnv1.READY_UNSPECIFIED
            config_map(rsp, "waiting", {"k": "v"})
            rsp.desired.resources["waiting"].ready = fnv1.READY_FALSE

    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": HalfReady()})

    assert sorted((e["type"], e["message"]) for e in result.events) == [
        ("Normal", 'Composed resource "unspecified" is not yet ready'),
        ("Normal", 'Composed resource "waiting" is not yet ready'),
    ]
