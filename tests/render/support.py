"""A small test API and fake functions for exercising the render engine.

`XParent` (namespaced) composes `spec.children` `XChild` composites and marks each
ready once the child reports Ready; it reads an optional `v1 ConfigMap` named
`settings` in its own namespace as a required resource. `XChild` composes one
provider-kubernetes Object wrapping a Deployment and is ready when the Object is.
`XPlatform` (cluster-scoped) composes a ProviderConfig and nothing else.
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import yaml
from crossplane.function import request as sdk_request
from crossplane.function import resource, response
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from modelplane_cli.render import (
    Apis,
    Document,
    FunctionRegistry,
    GrpcFunctions,
    InProcessFunctions,
    NoAdmission,
    RenderResult,
    parse_stream,
    render_async,
)
from modelplane_cli.render.admission import Admission
from modelplane_cli.render.runners import Runner

Obj = dict[str, Any]
API_VERSION = "example.org/v1"
OBJECT_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"

_XRD = """
apiVersion: apiextensions.crossplane.io/v2
kind: CompositeResourceDefinition
metadata: {{name: {plural}.example.org}}
spec:
  group: example.org
  names: {{kind: {kind}, plural: {plural}}}
  scope: {scope}
  versions:
  - name: v1
    served: true
    referenceable: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
{properties}
"""

_COMPOSITION = """
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata: {{name: {plural}.example.org}}
spec:
  compositeTypeRef: {{apiVersion: example.org/v1, kind: {kind}}}
  mode: Pipeline
  pipeline:
{steps}
"""

_PARENT_PROPERTIES = """
            required: [children]
            properties:
              children: {type: integer, minimum: 0, maximum: 10}
              image: {type: string, default: "engine:v1"}
"""
_CHILD_PROPERTIES = """
            required: [index]
            properties:
              index: {type: integer, minimum: 0}
              image: {type: string, minLength: 1}
              replicas: {type: integer, default: 1}
"""
_PLATFORM_PROPERTIES = """
            properties:
              region: {type: string}
"""


def write_apis(
    root: Path, steps: Mapping[str, list[str]] | None = None, parent_properties: str = ""
) -> Path:
    """Write the test API under root/apis; `steps` overrides a kind's pipeline functions."""
    pipelines = {
        "XParent": ["fn-parent"],
        "XChild": ["fn-child"],
        "XPlatform": ["fn-platform"],
        **(steps or {}),
    }
    kinds = {
        "XParent": ("xparents", "Namespaced", parent_properties or _PARENT_PROPERTIES),
        "XChild": ("xchildren", "Namespaced", _CHILD_PROPERTIES),
        "XPlatform": ("xplatforms", "Cluster", _PLATFORM_PROPERTIES),
    }
    apis = root / "apis"
    for kind, (plural, scope, properties) in kinds.items():
        directory = apis / plural
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "definition.yaml").write_text(
            _XRD.format(plural=plural, kind=kind, scope=scope, properties=properties.rstrip())
        )
        steps_yaml = "".join(
            f"  - step: step-{i}\n    functionRef: {{name: {fn}}}\n"
            for i, fn in enumerate(pipelines[kind])
        )
        (directory / "composition.yaml").write_text(
            _COMPOSITION.format(plural=plural, kind=kind, steps=steps_yaml.rstrip())
        )
    return apis


def ready(req: fnv1.RunFunctionRequest, name: str) -> bool:
    return resource.get_condition(req.observed.resources.get(name), "Ready").status == "True"


class FakeFunction(grpcv1.FunctionRunnerServiceServicer):
    """A test composition function: `compose` adds to the response the SDK starts from.

    A fake that builds on another (`ParentRunner`, say) calls `super().compose` first.
    """

    async def RunFunction(
        self, request: fnv1.RunFunctionRequest, context: Any
    ) -> fnv1.RunFunctionResponse:
        rsp = response.to(request)
        self.compose(request, rsp)
        return rsp

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        """What the function desires; the base passes the desired state on unchanged."""


def observed_composite(request: fnv1.RunFunctionRequest) -> Obj:
    return resource.struct_to_dict(request.observed.composite.resource)


class ParentRunner(FakeFunction):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        xr = observed_composite(request)
        namespace = xr["metadata"]["namespace"]
        response.require_resources(
            rsp, "settings", "v1", "ConfigMap", match_name="settings", namespace=namespace
        )
        settings = sdk_request.get_required_resource(request, "settings")
        image = str(xr["spec"].get("image", "engine:v1"))
        replicas = 1
        if settings is not None:
            replicas = int(settings.get("data", {}).get("replicas", "1"))
        elif "settings" in request.required_resources:
            response.warning(rsp, "ConfigMap settings not found; using one replica per child")
        ready_children = 0
        for i in range(int(xr["spec"]["children"])):
            key = f"child-{i}"
            resource.update(
                rsp.desired.resources[key],
                {
                    "apiVersion": API_VERSION,
                    "kind": "XChild",
                    "metadata": {"name": f"{xr['metadata']['name']}-{i}"},
                    "spec": {"index": i, "image": image, "replicas": replicas},
                },
            )
            if ready(request, key):
                rsp.desired.resources[key].ready = fnv1.READY_TRUE
                ready_children += 1
        resource.update(rsp.desired.composite, {"status": {"readyChildren": ready_children}})
        response.set_conditions(
            rsp,
            resource.Condition(
                typ="ChildrenReady",
                status="True" if ready_children == int(xr["spec"]["children"]) else "False",
                reason="AllReady" if ready_children == int(xr["spec"]["children"]) else "Waiting",
            ),
        )


class ChildRunner(FakeFunction):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        xr = observed_composite(request)
        name = xr["metadata"]["name"]
        resource.update(
            rsp.desired.resources["workload"],
            {
                "apiVersion": OBJECT_API_VERSION,
                "kind": "Object",
                "spec": {
                    "providerConfigRef": {"name": "cluster-a", "kind": "ClusterProviderConfig"},
                    "forProvider": {
                        "manifest": {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "metadata": {"name": name, "namespace": "serving"},
                            "spec": {
                                "replicas": xr["spec"].get("replicas", 1),
                                "selector": {"matchLabels": {"app": name}},
                                "template": {
                                    "metadata": {"labels": {"app": name}},
                                    "spec": {
                                        "containers": [
                                            {"name": "engine", "image": xr["spec"]["image"]}
                                        ]
                                    },
                                },
                            },
                        }
                    },
                },
            },
        )
        observed = request.observed.resources.get("workload")
        available = False
        if observed is not None:
            manifest = (
                resource.struct_to_dict(observed.resource)
                .get("status", {})
                .get("atProvider", {})
                .get("manifest", {})
            )
            conditions = manifest.get("status", {}).get("conditions", [])
            available = any(
                c.get("type") == "Available" and c.get("status") == "True" for c in conditions
            )
        if ready(request, "workload") and available:
            rsp.desired.resources["workload"].ready = fnv1.READY_TRUE
        resource.update(
            rsp.desired.composite, {"status": {"phase": "Serving" if available else "Pending"}}
        )


class PlatformRunner(FakeFunction):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        xr = observed_composite(request)
        resource.update(
            rsp.desired.resources["provider-config"],
            {
                "apiVersion": OBJECT_API_VERSION,
                "kind": "ClusterProviderConfig",
                "metadata": {"name": xr["metadata"]["name"]},
                "spec": {"credentials": {"source": "InjectedIdentity"}},
            },
        )
        rsp.desired.resources["provider-config"].ready = fnv1.READY_TRUE


def default_runners() -> dict[str, Runner]:
    return {"fn-parent": ParentRunner(), "fn-child": ChildRunner(), "fn-platform": PlatformRunner()}


def docs(text: str) -> list[Any]:
    return parse_stream(textwrap.dedent(text), "<test>")


def render_text(
    apis_dir: Path,
    text: str,
    runners: Mapping[str, Runner] | None = None,
    *,
    in_process: bool = True,
    admission: Admission | None = None,
    max_rounds: int = 20,
) -> RenderResult:
    """Render `text` against the API in `apis_dir` on a fresh event loop."""
    registry = FunctionRegistry(default_runners() if runners is None else runners)
    functions = InProcessFunctions(registry) if in_process else GrpcFunctions(registry)
    return asyncio.run(
        render_async(
            docs(text), Apis.load(apis_dir), functions, admission or NoAdmission(), max_rounds
        )
    )


def render_documents(
    apis_dir: Path,
    documents: Sequence[Document],
    runners: Mapping[str, Runner] | None = None,
    *,
    admission: Admission | None = None,
    max_rounds: int = 20,
    concurrent: bool = False,
) -> RenderResult:
    """Render `documents` in process against the API in `apis_dir`."""
    registry = FunctionRegistry(default_runners() if runners is None else runners)
    return asyncio.run(
        render_async(
            documents,
            Apis.load(apis_dir),
            InProcessFunctions(registry),
            admission or NoAdmission(),
            max_rounds,
            concurrent=concurrent,
        )
    )


def find(result: RenderResult, kind: str, name: str | None = None) -> list[Obj]:
    return [
        o
        for o in result.objects
        if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]


def one(result: RenderResult, kind: str, name: str | None = None) -> Obj:
    found = find(result, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def condition(obj: Mapping[str, Any], kind: str) -> Obj:
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == kind:
            return c
    return {}


PARENT = """
apiVersion: example.org/v1
kind: XParent
metadata: {name: web, namespace: team-a}
spec: {children: 2}
"""


def config_map(rsp: fnv1.RunFunctionResponse, key: str, data: dict[str, str]) -> None:
    """Compose ConfigMap `key` with `data`, Ready."""
    resource.update(
        rsp.desired.resources[key],
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": key}, "data": data},
    )
    rsp.desired.resources[key].ready = fnv1.READY_TRUE


def split_events(text: str) -> tuple[str, list[Any]]:
    """A `-o yaml` or `-o json` output as its objects (text, Events left out) and its
    Events, whole and in order."""
    if text.startswith("{"):
        listing = json.loads(text)
        items = listing.pop("items")
        objects = [i for i in items if i["kind"] != "Event"]
        events = [i for i in items if i["kind"] == "Event"]
        return json.dumps({**listing, "items": objects}, sort_keys=True), events
    documents = re.split(r"^---\n", text, flags=re.MULTILINE)
    objects = [d for d in documents if not re.search(r"^kind: Event$", d, flags=re.MULTILINE)]
    events = [
        yaml.safe_load(d) for d in documents if re.search(r"^kind: Event$", d, flags=re.MULTILINE)
    ]
    return "---\n".join(objects), events


def _not_yet_ready(event: Any) -> bool:
    return str(event.get("message", "")).endswith(" is not yet ready")


def assert_same_world(again: str, first: str) -> None:
    """`again` re-rendered from `first`'s output: the same objects byte for byte, and
    the same events but for the reconciler's `not yet ready` ones. A re-render of a
    converged world takes one round, so it holds only the last round's events, where
    the first render also holds what its earlier rounds said of resources not ready
    then; everything else, in the same order."""
    objects, events = split_events(again)
    first_objects, first_events = split_events(first)
    assert objects == first_objects
    assert [e for e in events if not _not_yet_ready(e)] == [
        e for e in first_events if not _not_yet_ready(e)
    ]
    remaining = iter(first_events)
    assert all(any(e == f for f in remaining) for e in events if _not_yet_ready(e))
