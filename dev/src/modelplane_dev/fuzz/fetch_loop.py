"""Crossplane v2.3's fetch loop as the fuzzer and the functions' tests run it.

`run_function` calls a function's RunFunction body directly; `final_response` calls
it again while its requirements change, handing it each time the objects it asked
for from a world of objects (`FetchingFunctionRunner.RunFunction` in
`internal/xfn/required_resources.go`), and returns the answer Crossplane keeps.
"""

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from modelplane.xfn.runner import ComposeFunction


class Runner(Protocol):
    async def RunFunction(  # noqa: N802 (the gRPC method name)
        self, request: fnv1.RunFunctionRequest, context: Any, /
    ) -> fnv1.RunFunctionResponse: ...


def run_function(runner: Runner, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """Call a Modelplane function's RunFunction body directly, with no event loop or
    worker thread (what its RunFunction runs in a thread); any other runner through
    asyncio."""
    if isinstance(runner, ComposeFunction):
        return runner.run_function(req)
    return asyncio.run(runner.RunFunction(req, None))


def final_response(
    runner: Runner,
    req: fnv1.RunFunctionRequest,
    *,
    world: fnv1.RunFunctionRequest | None = None,
    limit: int = 5,
    deterministic: bool = False,
) -> fnv1.RunFunctionResponse:
    """The response Crossplane v2.3's fetch loop keeps (`FetchingFunctionRunner.
    RunFunction`) in a world holding only the objects `req`'s fetched lists carry: a
    requirement `req` has a list for is answered with that list, as it is; any other
    from those objects (`_world`, `_select`), as the API server would.

    Calls again while the requirements differ from the previous call's (none before
    the first), as Crossplane does, `limit` calls at most; a call the loop does not
    keep must answer its requirements alone (AssertionError otherwise). `world`, when
    given, is the request whose lists stand for the world instead of `req`'s.

    `deterministic`: the runner answers equal requests equally (its own tests hold
    that: `determinism.nondeterminism`), so the loop does not send again a request
    it would send unchanged (every list it asks for is the one just sent, and the
    context comes back as it went): that answer would be the one just given, with
    the requirements just given, and the loop would keep it. The fuzzer's
    steady-state requests carry their lists already, so without this nearly every
    mutation would be answered twice. (Crossplane's main branch also keeps the first
    answer when the request already carries what it asks for:
    design/required-resources.md.)

    `req` is sent as it is, and never changed: each later request is built anew."""
    source = world if world is not None else req
    current = req
    previous: fnv1.Requirements | None = None
    for _ in range(limit):
        rsp = run_function(runner, current)
        if any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results):
            return rsp
        asked = rsp.requirements if rsp.HasField("requirements") else None
        if asked == previous:
            return rsp
        if any(name not in current.required_resources for name in rsp.requirements.resources):
            # Requirements and context only: the desired state it was handed, unchanged.
            discarded = (rsp.conditions, rsp.results)
            assert not any(discarded) and rsp.desired == current.desired, (
                "a call lacking a required key answers requirements only"
            )
        previous = asked
        if deterministic and _sent_again(current, source, asked, rsp):
            return rsp
        current = _following(current, source, asked, rsp)
    raise AssertionError(f"the requirements did not settle in {limit} calls")


def _sent_again(
    current: fnv1.RunFunctionRequest,
    source: fnv1.RunFunctionRequest,
    asked: fnv1.Requirements | None,
    rsp: fnv1.RunFunctionResponse,
) -> bool:
    """Whether `_following` would build `current` again, field for field: it asks
    for exactly the lists `current` carries, each one `source` has and `current`
    carries as it is, and the context comes back as it went. (It may also be so
    when a list is selected from the world; the loop then calls again, as without
    `deterministic`.)"""
    names = set(asked.resources) if asked is not None else set[str]()
    if names != set(current.required_resources) or not current.HasField("context"):
        return False
    if any(
        name not in source.required_resources
        or source.required_resources[name] != current.required_resources[name]
        for name in names
    ):
        return False
    return rsp.context == current.context


def _following(
    current: fnv1.RunFunctionRequest,
    source: fnv1.RunFunctionRequest,
    asked: fnv1.Requirements | None,
    rsp: fnv1.RunFunctionResponse,
) -> fnv1.RunFunctionRequest:
    """The request the fetch loop sends after `current` was answered with `rsp`:
    what `asked` names fetched (`source`'s list where it has one, else selected from
    its objects) and the answer's context carried over."""
    objects = _world(source, asked)
    following = copied(current)
    following.ClearField("required_resources")
    selectors = dict(asked.resources) if asked is not None else {}
    for name in sorted(selectors):
        found = following.required_resources[name]
        found.SetInParent()
        if name in source.required_resources:
            found.CopyFrom(source.required_resources[name])
            continue
        selector = selectors[name]
        seen: set[tuple[str, str, str, str]] = set()
        for kind, key, item in objects:
            if key in seen or kind != (selector.api_version, selector.kind):
                continue
            if _select(selector, key, item.resource):
                seen.add(key)
                found.items.add().CopyFrom(item)
    following.context.CopyFrom(rsp.context)
    return following


Identity = tuple[str, str, str, str]


def _world(
    req: fnv1.RunFunctionRequest, asked: fnv1.Requirements | None
) -> list[tuple[tuple[str, str], Identity, fnv1.Resource]]:
    """Every object `req`'s lists carry, with the kind it is stored as (the kind its
    list was asked for by, since a mutated object's own apiVersion may be garbage,
    else its own) and its `_identity`."""
    world: list[tuple[tuple[str, str], Identity, fnv1.Resource]] = []
    for name in sorted(req.required_resources):
        for item in req.required_resources[name].items:
            identity = _identity(item.resource)
            if asked is not None and name in asked.resources:
                selector = asked.resources[name]
                kind = (selector.api_version, selector.kind)
            else:
                kind = identity[:2]
            world.append((kind, identity, item))
    return world


def _fields(struct: struct_pb2.Struct, name: str) -> dict[str, struct_pb2.Value]:
    value = struct.fields.get(name)
    if value is None or value.WhichOneof("kind") != "struct_value":
        return {}
    return dict(value.struct_value.fields)


def _text(fields: Mapping[str, struct_pb2.Value], name: str) -> str:
    value = fields.get(name)
    return value.string_value if value is not None else ""


def _identity(obj: struct_pb2.Struct) -> Identity:
    """apiVersion, kind, namespace and name, each "" where unreadable."""
    metadata = _fields(obj, "metadata")
    top = dict(obj.fields)
    namespace, name = _text(metadata, "namespace"), _text(metadata, "name")
    return (_text(top, "apiVersion"), _text(top, "kind"), namespace, name)


def _select(selector: fnv1.ResourceSelector, identity: Identity, obj: struct_pb2.Struct) -> bool:
    """Whether the API server would answer `selector`, of the kind `obj` is stored
    as, with `obj` (whose `_identity` is `identity`): by namespace, name and labels."""
    _, _, namespace, name = identity
    if selector.HasField("namespace") and selector.namespace != namespace:
        return False
    if selector.WhichOneof("match") == "match_name":
        return selector.match_name == name
    if selector.WhichOneof("match") == "match_labels":
        metadata = obj.fields.get("metadata")
        labels = (
            _fields(metadata.struct_value, "labels")
            if metadata is not None and metadata.WhichOneof("kind") == "struct_value"
            else {}
        )
        wanted = selector.match_labels.labels
        return all(k in labels and _text(labels, k) == v for k, v in wanted.items())
    return True


def copied(base: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.CopyFrom(base)
    return req
