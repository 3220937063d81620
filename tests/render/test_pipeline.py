"""Pipeline semantics: step order, context, the requirements loop, credentials, failures."""

from __future__ import annotations

import base64
import hashlib
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import grpc
import pytest
from crossplane.function import request as sdk_request
from crossplane.function import resource, response

from modelplane_cli.render import FunctionRegistry, runners
from modelplane_cli.render.runners import ENTRY_POINT_GROUP, FunctionNotFoundError

from .support import (
    PARENT,
    ChildRunner,
    FakeFunction,
    condition,
    find,
    one,
    render_text,
    write_apis,
)


def _config_map(rsp: fnv1.RunFunctionResponse, key: str, data: dict[str, str]) -> None:
    resource.update(
        rsp.desired.resources[key],
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": key}, "data": data},
    )
    rsp.desired.resources[key].ready = fnv1.READY_TRUE


class First(FakeFunction):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        _config_map(rsp, "first", {"from": "step-0"})
        rsp.context.update({"greeting": "hello from step-0"})


class Second(FakeFunction):
    def __init__(self) -> None:
        self.saw_desired: list[str] = []

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.saw_desired = sorted(request.desired.resources)
        context_values = resource.struct_to_dict(request.context)
        greeting = context_values.get("greeting", "none")
        _config_map(rsp, "second", {"context": str(greeting)})


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


class Selector(FakeFunction):
    """Asks for ConfigMaps three ways and writes what it got into a ConfigMap."""

    def __init__(self) -> None:
        self.calls = 0

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.calls += 1
        response.require_resources(rsp, "labelled", "v1", "ConfigMap", match_labels={"tier": "a"})
        response.require_resources(rsp, "all", "v1", "ConfigMap")
        response.require_resources(
            rsp, "missing", "v1", "ConfigMap", match_name="nope", namespace="team-a"
        )
        response.require_resources(
            rsp, "scoped", "v1", "ConfigMap", match_labels={"tier": "a"}, namespace="ns-b"
        )
        found = {
            name: ",".join(
                f"{o['metadata']['namespace']}/{o['metadata']['name']}"
                for o in sdk_request.get_required_resources(request, name)
            )
            for name in ("labelled", "all", "missing", "scoped")
        }
        found["missing-present"] = str("missing" in request.required_resources)
        _config_map(rsp, "answer", found)


WORLD = """
---
apiVersion: v1
kind: ConfigMap
metadata: {name: z, namespace: ns-a, labels: {tier: a}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: ns-b, labels: {tier: a}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns-b, labels: {tier: b}}
"""


def test_requirements_are_fetched_sorted_filtered_and_called_again(tmp_path: Path) -> None:
    apis = write_apis(tmp_path)
    selector = Selector()

    result = render_text(apis, PARENT + WORLD, {"fn-parent": selector})

    assert result.ok
    answer = one(result, "ConfigMap", "answer")["data"]
    assert answer["labelled"] == "ns-a/z,ns-b/b"
    assert answer["scoped"] == "ns-b/b"
    # The composite's own answer is in the world by the last round, in team-a.
    assert answer["all"] == "ns-a/z,ns-b/a,ns-b/b,team-a/answer"
    assert answer["missing"] == ""
    assert answer["missing-present"] == "True"


def test_requirements_loop_stops_once_requirements_repeat(tmp_path: Path) -> None:
    apis = write_apis(tmp_path)
    selector = Selector()

    result = render_text(apis, PARENT, {"fn-parent": selector}, max_rounds=1)

    # One call to learn the requirements, one with them met.
    assert selector.calls == 2
    assert result.rounds == 1


def test_requirements_that_never_settle_fail_after_six_calls(tmp_path: Path) -> None:
    class Restless(FakeFunction):
        def __init__(self) -> None:
            self.calls = 0

        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            self.calls += 1
            response.require_resources(
                rsp, "next", "v1", "ConfigMap", match_name=f"cm-{self.calls}"
            )

    restless = Restless()
    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": restless}, max_rounds=1)

    assert restless.calls == 6
    synced = condition(one(result, "XParent"), "Synced")
    assert synced["message"] == (
        'cannot compose resources: cannot run pipeline step "step-0": requirements '
        "didn't stabilize after the maximum number of iterations (5)"
    )


def test_context_is_carried_between_requirement_iterations(tmp_path: Path) -> None:
    class Counting(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            seen = int(resource.struct_to_dict(request.context).get("calls", 0))
            rsp.context.update({"calls": seen + 1})
            response.require_resources(rsp, "x", "v1", "ConfigMap", match_name="x")
            _config_map(rsp, "calls", {"seen": str(seen)})

    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": Counting()})

    assert one(result, "ConfigMap", "calls")["data"] == {"seen": "1"}


def test_credentials_and_bootstrap_requirements_come_from_the_world(tmp_path: Path) -> None:
    apis = write_apis(tmp_path)
    composition = apis / "xparents" / "composition.yaml"
    composition.write_text(
        composition.read_text()
        + """
    credentials:
    - name: token
      source: Secret
      secretRef: {namespace: team-a, name: api-token}
    requirements:
      requiredResources:
      - requirementName: zed
        apiVersion: v1
        kind: ConfigMap
        name: z
        namespace: ns-a
"""
    )

    class Reader(FakeFunction):
        def __init__(self) -> None:
            self.first_call_had_zed = False
            self.calls = 0

        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            self.calls += 1
            if self.calls == 1:
                self.first_call_had_zed = bool(sdk_request.get_required_resources(request, "zed"))
            token = sdk_request.get_credentials(request, "token").data
            _config_map(rsp, "seen", {str(k): str(v) for k, v in sorted(token.items())})

    secret = f"""
---
apiVersion: v1
kind: Secret
metadata: {{name: api-token, namespace: team-a}}
data: {{token: {base64.b64encode(b"s3cret").decode()}}}
stringData: {{user: admin}}
"""
    reader = Reader()
    result = render_text(apis, PARENT + WORLD + secret, {"fn-parent": reader})

    assert result.ok, result.errors
    assert reader.first_call_had_zed
    assert one(result, "ConfigMap", "seen")["data"] == {"token": "s3cret", "user": "admin"}

    missing = render_text(apis, PARENT, {"fn-parent": Reader()})
    assert any("Secret team-a/api-token not found" in e for e in missing.errors)


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
        'cannot compose resources: cannot run pipeline step "step-0": rpc error: '
        "code = Unknown desc = Unexpected <class 'ValueError'>: boom"
    )


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
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": ["a"]}},
            "metadata.labels: must be a map of strings",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"a": 1}}},
            "metadata.labels: must be a map of strings",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_Valid"}},
            'metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain',
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"a": "b c"}}},
            'metadata.labels: Invalid value: "b c"',
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"annotations": {"big": "x" * (256 * 1024)}},
            },
            "metadata.annotations: Too long: may not be more than 262144 bytes",
        ),
    ],
)
def test_malformed_desired_resources_are_refused_not_crashed_on(
    tmp_path: Path, desired: dict[str, Any], error: str
) -> None:
    class Sloppy(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            resource.update(rsp.desired.resources["thing"], desired)

    result = render_text(write_apis(tmp_path), PARENT, {"fn-parent": Sloppy()})

    assert not result.ok
    message = condition(one(result, "XParent"), "Synced")["message"]
    assert message.startswith('cannot compose resources: cannot apply composed resource "thing": ')
    assert error in message
    assert find(result, "ConfigMap") == []


def test_step_input_reaches_the_function(tmp_path: Path) -> None:
    apis = write_apis(tmp_path)
    composition = apis / "xparents" / "composition.yaml"
    composition.write_text(
        composition.read_text() + "\n    input: {apiVersion: example.org/v1, kind: Input, n: 3}\n"
    )

    class Echo(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            given = resource.struct_to_dict(request.input)
            _config_map(rsp, "echo", {k: str(v) for k, v in sorted(given.items())})

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


def test_meta_tag_is_the_hash_of_the_request_without_its_tag(tmp_path: Path) -> None:
    class Recorder(FakeFunction):
        def __init__(self) -> None:
            self.tags: list[str] = []
            self.expected: list[str] = []

        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            untagged = fnv1.RunFunctionRequest()
            untagged.CopyFrom(request)
            untagged.meta.tag = ""
            digest = hashlib.sha256(untagged.SerializeToString(deterministic=True)).hexdigest()
            self.tags.append(request.meta.tag)
            self.expected.append(digest)
            response.require_resources(rsp, "x", "v1", "ConfigMap", match_name="x")

    recorder = Recorder()
    render_text(write_apis(tmp_path), PARENT + WORLD, {"fn-parent": recorder}, max_rounds=1)

    assert recorder.tags == recorder.expected
    # The second call carries the required resources, so it is a different request.
    assert len(set(recorder.tags)) == 2


def test_each_function_is_served_once_per_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    make_server = grpc.aio.server

    def counting_server(*args: Any, **kwargs: Any) -> Any:
        server = make_server(*args, **kwargs)
        started.append(server)
        return server

    monkeypatch.setattr(grpc.aio, "server", counting_server)

    result = render_text(write_apis(tmp_path), PARENT, in_process=False)

    assert result.ok, result.errors
    assert result.rounds > 1
    assert len(started) == 2  # fn-parent and fn-child, whatever the number of calls
