"""The requirements loop: what a step asks for is fetched from the world, sorted and
filtered, and the step called again until its requirements repeat; credentials
and bootstrap requirements come from the world too."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from crossplane.function import request as sdk_request
from crossplane.function import resource, response

from .support import (
    PARENT,
    FakeFunction,
    condition,
    config_map,
    one,
    render_text,
    write_apis,
)


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
        config_map(rsp, "answer", found)


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
        'cannot compose resources: cannot run Composition pipeline step "step-0": requirements '
        "didn't stabilize after the maximum number of iterations (5)"
    )


def test_context_is_carried_between_requirement_iterations(tmp_path: Path) -> None:
    class Counting(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            seen = int(resource.struct_to_dict(request.context).get("calls", 0))
            rsp.context.update({"calls": seen + 1})
            response.require_resources(rsp, "x", "v1", "ConfigMap", match_name="x")
            config_map(rsp, "calls", {"seen": str(seen)})

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
            config_map(rsp, "seen", {str(k): str(v) for k, v in sorted(token.items())})

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
    # Crossplane's errFmtGetCredentialsFromSecret around the client's NotFound.
    message = (
        'cannot compose resources: cannot get Composition pipeline step "step-0" credential '
        '"token" from Secret: secrets "api-token" not found'
    )
    assert any(message in e for e in missing.errors), missing.errors


class PerItem(FakeFunction):
    """Asks for the ConfigMaps labelled tier=a, then, per one fetched, for those whose
    `owner` label names it: requirements that depend on what was fetched, as
    compose-model-deployment's per-cluster replica lists do."""

    def __init__(self) -> None:
        self.calls = 0

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.calls += 1
        response.require_resources(rsp, "tier-a", "v1", "ConfigMap", match_labels={"tier": "a"})
        if "tier-a" not in request.required_resources:
            return
        found: dict[str, str] = {}
        for item in sdk_request.get_required_resources(request, "tier-a"):
            name = item["metadata"]["name"]
            key = f"owned-by/{name}"
            response.require_resources(rsp, key, "v1", "ConfigMap", match_labels={"owner": name})
            found[name] = ",".join(
                o["metadata"]["name"] for o in sdk_request.get_required_resources(request, key)
            )
        config_map(rsp, "answer", found)


OWNED = """
---
apiVersion: v1
kind: ConfigMap
metadata: {name: z-1, namespace: ns-a, labels: {owner: z}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b-1, namespace: ns-c, labels: {owner: b}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a-1, namespace: ns-c, labels: {owner: a}}
"""


def test_requirements_that_depend_on_what_was_fetched_settle_in_three_calls(
    tmp_path: Path,
) -> None:
    apis = write_apis(tmp_path)
    per_item = PerItem()

    render_text(apis, PARENT + WORLD + OWNED, {"fn-parent": per_item}, max_rounds=1)
    # The list; then the lists per item of it; then the same requirements, which end it.
    assert per_item.calls == 3

    result = render_text(apis, PARENT + WORLD + OWNED, {"fn-parent": PerItem()})
    assert result.ok
    # Each list is every namespace's objects with the label; a (tier b) is never asked.
    assert one(result, "ConfigMap", "answer")["data"] == {"b": "b-1", "z": "z-1"}


def test_every_iteration_carries_the_tag_of_the_steps_first_request(tmp_path: Path) -> None:
    class Tags(Selector):
        def __init__(self) -> None:
            super().__init__()
            self.requests: list[fnv1.RunFunctionRequest] = []

        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            self.requests.append(request)
            super().compose(request, rsp)

    tags = Tags()
    render_text(write_apis(tmp_path), WORLD + "---" + PARENT, {"fn-parent": tags}, max_rounds=1)

    first = fnv1.RunFunctionRequest()
    first.CopyFrom(tags.requests[0])
    # Crossplane's Tag(fnreq) hashes the request before its meta is set.
    first.ClearField("meta")
    expected = hashlib.sha256(first.SerializeToString(deterministic=True)).hexdigest()
    assert len(tags.requests) == 2
    assert [r.meta.tag for r in tags.requests] == [expected, expected]


def test_bootstrap_schemas_are_sent_on_every_call_and_tagged(tmp_path: Path) -> None:
    # Crossplane fetches a step's `requirements.requiredSchemas` before tagging its
    # first request, and keeps them on every requirements iteration.
    apis = write_apis(tmp_path / "with")
    plain = write_apis(tmp_path / "without")
    composition = apis / "xparents" / "composition.yaml"
    composition.write_text(
        composition.read_text()
        + """
    requirements:
      requiredSchemas:
      - {requirementName: child, apiVersion: example.org/v1, kind: XChild}
"""
    )

    class Schemas(FakeFunction):
        def __init__(self) -> None:
            self.seen: list[tuple[str, ...]] = []
            self.tags: list[str] = []
            self.child_schema_type = ""

        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            self.seen.append(tuple(sorted(request.required_schemas)))
            self.tags.append(request.meta.tag)
            if "child" in request.required_schemas:
                openapi = request.required_schemas["child"].openapi_v3
                self.child_schema_type = openapi.fields["type"].string_value
            response.require_schema(rsp, "own", "example.org/v1", "XParent")

    schemas, without = Schemas(), Schemas()
    render_text(apis, PARENT, {"fn-parent": schemas})
    render_text(plain, PARENT, {"fn-parent": without})

    assert schemas.seen[:2] == [("child",), ("child", "own")]
    assert schemas.child_schema_type == "object"
    # One tag per step, over a first request that holds the bootstrap schema.
    assert schemas.tags[0] == schemas.tags[1] != without.tags[0]
