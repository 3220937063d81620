"""Pipeline semantics: step order, context, step input, tags and failures."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import grpc
import pytest
from crossplane.function import resource, response

from modelplane.core.vocabulary import ANNOTATION_COMPOSITION_RESOURCE_NAME, LABEL_COMPOSITE
from modelplane_cli.render import FunctionRegistry, runners
from modelplane_cli.render.runners import ENTRY_POINT_GROUP, FunctionNotFoundError

from .support import (
    PARENT,
    ChildRunner,
    FakeFunction,
    ParentRunner,
    condition,
    config_map,
    find,
    one,
    render_text,
    write_apis,
)
from .test_requirements_loop import WORLD


class First(FakeFunction):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        config_map(rsp, "first", {"from": "step-0"})
        rsp.context.update({"greeting": "hello from step-0"})


class Second(FakeFunction):
    def __init__(self) -> None:
        self.saw_desired: list[str] = []

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.saw_desired = sorted(request.desired.resources)
        context_values = resource.struct_to_dict(request.context)
        greeting = context_values.get("greeting", "none")
        config_map(rsp, "second", {"context": str(greeting)})


def test_steps_run_in_order_passing_desired_state_and_context(tmp_path: Path) -> None:
    apis = write_apis(tmp_path, {"XParent": ["fn-first", "fn-second"]})
    second = Second()

    result = render_text(apis, PARENT, {"fn-first": First(), "fn-second": second})

    assert result.ok
    assert second.saw_desired == ["first"]
    assert one(result, "ConfigMap", "second")["data"] == {"context": "hello from step-0"}
    assert one(result, "ConfigMap", "first")["data"] == {"from": "step-0"}


def test_a_resource_a_later_step_drops_is_not_composed(tmp_path: Path) -> None:
    class Dropper(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            del rsp.desired.resources["first"]

    apis = write_apis(tmp_path, {"XParent": ["fn-first", "fn-drop"]})
    result = render_text(apis, PARENT, {"fn-first": First(), "fn-drop": Dropper()})

    assert find(result, "ConfigMap") == []


class Exploding(FakeFunction):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        raise ValueError("boom")


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "grpc"])
def test_a_function_that_raises_is_a_compose_error_not_a_crash(
    tmp_path: Path, in_process: bool
) -> None:
    result = render_text(
        write_apis(tmp_path), PARENT, {"fn-parent": Exploding()}, in_process=in_process
    )

    assert not result.ok
    assert condition(one(result, "XParent"), "Synced")["message"] == (
        'cannot compose resources: cannot run Composition pipeline step "step-0": '
        'cannot run Function "fn-parent": rpc error: '
        "code = Unknown desc = Unexpected <class 'ValueError'>: boom"
    )


class BytesExploding(FakeFunction):
    """A runner with the synchronous bytes entry (as `ComposeFunction` has), failing."""

    def run_function_serialized(
        self, data: bytes, deterministic: bool = False
    ) -> fnv1.RunFunctionResponse:
        raise ValueError("boom")


class NotAResponse(FakeFunction):
    def run_function_serialized(self, data: bytes, deterministic: bool = False) -> object:
        return {"desired": {}}


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "grpc"])
def test_a_failing_bytes_entry_is_reported_as_the_sdk_server_reports_it(
    tmp_path: Path, in_process: bool
) -> None:
    result = render_text(
        write_apis(tmp_path), PARENT, {"fn-parent": BytesExploding()}, in_process=in_process
    )

    assert not result.ok
    assert condition(one(result, "XParent"), "Synced")["message"] == (
        'cannot compose resources: cannot run Composition pipeline step "step-0": '
        'cannot run Function "fn-parent": rpc error: '
        "code = Unknown desc = Unexpected <class 'ValueError'>: boom"
    )


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "grpc"])
def test_an_answer_that_is_not_a_response_is_reported_alike_in_both_modes(
    tmp_path: Path, in_process: bool
) -> None:
    result = render_text(
        write_apis(tmp_path), PARENT, {"fn-parent": NotAResponse()}, in_process=in_process
    )

    assert not result.ok
    assert condition(one(result, "XParent"), "Synced")["message"] == (
        'cannot compose resources: cannot run Composition pipeline step "step-0": '
        'cannot run Function "fn-parent": rpc error: '
        "code = Unknown desc = function returned dict, not RunFunctionResponse"
    )


class TooDeep(FakeFunction):
    """Composes a ConfigMap whose body nests past upb's decoding depth:
    Crossplane's Go client reads such an answer, the render's Python parser cannot."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        deep: object = "x"
        for _ in range(40):
            deep = {"n": deep}
        resource.update(
            rsp.desired.resources["deep"],
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep"}, "x": deep},
        )


class BytesTooDeep(TooDeep):
    def run_function_serialized(
        self, data: bytes, deterministic: bool = False
    ) -> fnv1.RunFunctionResponse:
        request = fnv1.RunFunctionRequest.FromString(data)
        rsp = response.to(request)
        self.compose(request, rsp)
        return rsp


@pytest.mark.parametrize("runner", [TooDeep, BytesTooDeep], ids=["RunFunction", "bytes entry"])
@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "grpc"])
def test_an_answer_too_deep_to_decode_is_a_failed_call_alike_in_both_modes(
    tmp_path: Path, in_process: bool, runner: type[FakeFunction]
) -> None:
    result = render_text(
        write_apis(tmp_path), PARENT, {"fn-parent": runner()}, in_process=in_process
    )

    assert not result.ok
    assert find(result, "ConfigMap") == []
    assert condition(one(result, "XParent"), "Synced")["message"] == (
        'cannot compose resources: cannot run Composition pipeline step "step-0": '
        'cannot run Function "fn-parent": rpc error: '
        "code = Internal desc = the response cannot be decoded: it nests deeper than the "
        "render's protobuf parser reads (100 levels); Crossplane's Go parser would read it"
    )


class BytesRecorder(ParentRunner):
    """Keeps what its synchronous bytes entry was handed, and composes as the parent."""

    def __init__(self) -> None:
        self.received: list[tuple[bytes, bool]] = []

    def run_function_serialized(
        self, data: bytes, deterministic: bool = False
    ) -> fnv1.RunFunctionResponse:
        self.received.append((data, deterministic))
        request = fnv1.RunFunctionRequest.FromString(data)
        rsp = response.to(request)
        self.compose(request, rsp)
        return rsp


def test_the_bytes_entry_gets_the_engine_s_bytes_alike_over_grpc_and_in_process(
    tmp_path: Path,
) -> None:
    apis = write_apis(tmp_path)
    over_grpc, in_process = BytesRecorder(), BytesRecorder()

    render_text(apis, PARENT + WORLD, {"fn-parent": over_grpc}, in_process=False)
    render_text(apis, PARENT + WORLD, {"fn-parent": in_process}, in_process=True)

    assert len(over_grpc.received) > 1
    assert over_grpc.received == in_process.received
    assert all(deterministic for _, deterministic in over_grpc.received)


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "grpc"])
def test_a_function_that_is_not_installed_is_reported(tmp_path: Path, in_process: bool) -> None:
    result = render_text(write_apis(tmp_path), PARENT, {}, in_process=in_process)

    assert not result.ok
    message = condition(one(result, "XParent"), "Synced")["message"]
    assert "function 'fn-parent' is not installed" in message


@pytest.mark.parametrize(
    ("desired", "error"),
    [
        ({"kind": "ConfigMap", "metadata": {"name": "x"}}, "apiVersion and kind are required"),
        ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "x"}, "metadata: must be an object"),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_Valid"}},
            ' because it has an invalid name "Not_Valid". Must be a valid RFC 1123 subdomain',
        ),
    ],
)
def test_malformed_desired_resources_are_refused_not_crashed_on(
    tmp_path: Path, desired: dict[str, Any], error: str
) -> None:
    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": _Sloppy(desired)})

    assert not result.ok
    message = condition(one(result, "XParent"), "Synced")["message"]
    assert message.startswith(
        (
            'cannot compose resources: cannot apply composed resource "thing"',
            'cannot compose resources: cannot unmarshal desired composed resource "thing"',
        )
    )
    assert error in message
    assert find(result, "ConfigMap") == []


@pytest.mark.parametrize(
    "meta",
    [
        {"labels": ["a"]},
        {"labels": {"a": 1, "b": "kept-not"}},
        {"annotations": "a"},
        {"annotations": {"a": None}},
        {"ownerReferences": "x"},
        {"ownerReferences": [{"kind": "Other", "uid": "u1"}, "x"]},
    ],
)
def test_metadata_go_cannot_read_is_replaced_and_the_resource_applied(
    tmp_path: Path, meta: dict[str, Any]
) -> None:
    # apimachinery's Unstructured getters answer nil for a map that is not all
    # strings or a list that is not all objects; crossplane-runtime then sets only
    # Crossplane's own keys and controller reference, and the apply goes ahead.
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", **meta}}
    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": _Sloppy(desired)})

    assert condition(one(result, "XParent"), "Synced")["status"] == "True"
    written = one(result, "ConfigMap", "x")["metadata"]
    assert written["labels"] == {LABEL_COMPOSITE: "web"}
    assert written["annotations"] == {ANNOTATION_COMPOSITION_RESOURCE_NAME: "thing"}
    assert [r["kind"] for r in written["ownerReferences"]] == ["XParent"]


@pytest.mark.parametrize(
    ("meta", "error"),
    [
        ({"labels": {"a": "b c"}}, 'metadata.labels: Invalid value: "b c"'),
        (
            {"annotations": {"big": "x" * (256 * 1024)}},
            "metadata.annotations: Too long: may not be more than 262144 bytes",
        ),
    ],
)
def test_metadata_the_api_server_refuses_fails_only_that_apply(
    tmp_path: Path, meta: dict[str, Any], error: str
) -> None:
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", **meta}}
    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": _Sloppy(desired)})

    parent = one(result, "XParent")
    assert condition(parent, "Synced")["message"] == "Unsynced resources: thing"
    warnings = [e["message"] for e in result.events if e["type"] == "Warning"]
    assert any(
        m.startswith('cannot apply composed resource "thing": ConfigMap "x" is invalid: ')
        and error in m
        for m in warnings
    )
    assert find(result, "ConfigMap") == []


class _Sloppy(FakeFunction):
    def __init__(self, desired: dict[str, Any]) -> None:
        super().__init__()
        self.desired = desired

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        resource.update(rsp.desired.resources["thing"], self.desired)


def test_step_input_reaches_the_function(tmp_path: Path) -> None:
    apis = write_apis(tmp_path)
    composition = apis / "xparents" / "composition.yaml"
    composition.write_text(
        composition.read_text() + "\n    input: {apiVersion: example.org/v1, kind: Input, n: 3}\n"
    )

    class Echo(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            given = resource.struct_to_dict(request.input)
            config_map(rsp, "echo", {k: str(v) for k, v in sorted(given.items())})

    result = render_text(apis, PARENT, {"fn-parent": Echo()})

    assert one(result, "ConfigMap", "echo")["data"] == {
        "apiVersion": "example.org/v1",
        "kind": "Input",
        "n": "3.0",
    }


def test_functions_are_found_by_entry_point_name(monkeypatch: pytest.MonkeyPatch) -> None:
    found = [
        EntryPoint("fn-child", f"{ChildRunner.__module__}:ChildRunner", ENTRY_POINT_GROUP),
        EntryPoint("fn-broken", "no_such_module_anywhere:Runner", ENTRY_POINT_GROUP),
    ]
    monkeypatch.setattr(
        runners, "entry_points", lambda group: [e for e in found if e.group == group]
    )
    registry = FunctionRegistry()

    assert isinstance(registry.runner("fn-child"), ChildRunner)
    assert registry.runner("fn-child") is registry.runner("fn-child")
    with pytest.raises(FunctionNotFoundError, match="'fn-broken' cannot be loaded"):
        registry.runner("fn-broken")
    with pytest.raises(FunctionNotFoundError, match="'fn-absent' is not installed"):
        registry.runner("fn-absent")


def test_metadata_the_api_server_accepts_is_composed(tmp_path: Path) -> None:
    # The API server checks annotation keys lower-cased, so an upper-case prefix is fine.
    metadata = {
        "name": "tidy.config",
        "labels": {"app.kubernetes.io/name": "web", "empty": ""},
        "annotations": {"Example.com/Owner": "Team A", "Note": "free text: any characters"},
    }

    class Tidy(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            resource.update(
                rsp.desired.resources["thing"],
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata},
            )

    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": Tidy()})

    assert result.ok, result.errors
    annotations = one(result, "ConfigMap", "tidy.config")["metadata"]["annotations"]
    assert annotations["Example.com/Owner"] == "Team A"


def test_each_function_is_served_once_per_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    make_server = grpc.server

    def counting_server(*args: Any, **kwargs: Any) -> Any:
        server = make_server(*args, **kwargs)
        started.append(server)
        return server

    monkeypatch.setattr(grpc, "server", counting_server)

    result = render_text(write_apis(tmp_path), PARENT, in_process=False)

    assert result.ok, result.errors
    assert result.rounds > 1
    assert len(started) == 2  # fn-parent and fn-child, whatever the number of calls
