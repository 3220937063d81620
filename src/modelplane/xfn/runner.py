"""The base of every Modelplane function: RunFunction never raises.

A bug must not take a running model down. An exception escaping RunFunction
would fail the reconcile anyway; turning it into a fatal result is strictly
better, because Crossplane stops a pipeline at a fatal result before it garbage
collects or applies anything, so every composed resource stays as it was.

One slow reconcile must not stall the others: compose runs in a worker thread,
so the gRPC server's event loop keeps accepting and answering calls while it
works. Compose is pure Python and holds the GIL, but CPython hands it to other
threads every few milliseconds, so a second call is served alongside; what
bounds the slow one is its own budget (the scheduler's CEL budget per decision).
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import abc
import asyncio
import gc
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar, cast, get_args, overload

import grpc
from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError
from pydantic import BaseModel

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.observed import condition_is
from modelplane.core.vocabulary import Reason
from modelplane.xfn import memo, received, report, required
from modelplane.xfn.memo import digest
from modelplane.xfn.structs import plain, to_dict, update

M = TypeVar("M", bound=BaseModel)


class Waiting(Exception):  # noqa: N818 (a state, not a failure)
    """What the function needs was fetched but cannot be used yet (a gateway not
    found or not ready).

    Nothing can be decided, so the runner holds: it re-emits what was composed and
    what the composite published, and reports `message` on the function's
    `waiting_condition` with the raiser's `reason`, status Unknown unless the raiser
    says otherwise (a gateway that is not found is waited for, but False). A
    resource not fetched yet is not waited for here: `required.Unfetched` answers
    Crossplane's fetch loop with the requirements alone.
    """

    def __init__(self, message: str, *, reason: str, status: bool | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.reason = reason


def published(composite: type[BaseModel]) -> tuple[str, ...]:
    """The status fields a function publishes on `composite`: every field of its
    generated status model but the conditions, which the function sets through the
    response's conditions, not the status it writes."""
    field = composite.model_fields.get("status")
    found = [
        model
        for model in get_args(field.annotation if field is not None else None)
        if isinstance(model, type) and issubclass(model, BaseModel)
    ]
    if len(found) != 1:
        raise TypeError(f"{composite.__name__} has no status model")
    return tuple(name for name in found[0].model_fields if name != "conditions")


class ComposeFunction(grpcv1.FunctionRunnerServiceServicer, abc.ABC):
    """Subclasses implement compose(); the base owns the safety net.

    `validity_condition` is the condition a function reports its composite's
    validity on. A compose that raises `Waiting` is held (see `Waiting`) on its
    `waiting_condition`. Input the function cannot read (`InvalidInputError` from reading
    an object into its model, or from any layer below) sets it False with every
    issue, one Warning event each, and re-emits every composed resource as
    observed: Crossplane would delete what a function stops emitting. The
    composite's `published_status` fields are re-published as observed too (a
    composite's status is applied, so a field left out would be removed), and
    the requirements asked for before the error stay asked for, so Crossplane's
    fetch loop settles on the same requirements every call.
    """

    validity_condition: ClassVar[str]
    # The condition that says what a `Waiting` compose waits for.
    waiting_condition: ClassVar[str | None] = None
    published_status: ClassVar[tuple[str, ...]] = ()
    # Whether a False validity condition makes the composite not Ready. A platform
    # object that is invalid is not ready, whatever it composed; a ModelDeployment
    # whose edit cannot be placed keeps serving what runs, so it says False here.
    unready_when_invalid: ClassVar[bool] = True

    def __init__(self) -> None:
        self.log = logging.get_logger()
        # What this runner's calls read, kept for its later calls (see `memo.Memos`).
        self.memos = memo.Memos()

    async def RunFunction(  # noqa: N802 (the gRPC method name)
        self,
        request: fnv1.RunFunctionRequest,
        context: "grpc.aio.ServicerContext[Any, Any] | None" = None,
    ) -> fnv1.RunFunctionResponse:
        # In a worker thread, so the event loop keeps serving (see the module docstring).
        return await asyncio.to_thread(self.run_function, request)

    async def run_serialized(self, data: bytes) -> fnv1.RunFunctionResponse:
        """RunFunction of the request serialized as `data` as it arrived, its fetched
        lists kept as bytes until read (`received`): what the served function calls.
        The answer is RunFunction's for the parsed request."""
        return await asyncio.to_thread(self.run_function_serialized, data)

    def run_function_serialized(
        self, data: bytes, deterministic: bool = False
    ) -> fnv1.RunFunctionResponse:
        """`run_serialized`, synchronously (a worker process, the render engine);
        `deterministic` when the caller serialized `data` deterministically (the
        render engine), so a fetched list's bytes key its memo as they are."""
        try:
            try:
                req, lists = received.split(data, deterministic=deterministic)
            except ValueError:
                # Bytes the split does not read are parsed whole, as the SDK's server
                # would parse them (and refuse them, when they are not a request).
                return self.run_function(fnv1.RunFunctionRequest.FromString(data))
        except DecodeError as error:
            return received.undecodable(data, error)
        with received.holding(req, lists):
            return self.run_function(req)

    def run_function(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        """RunFunction's work, synchronously: compose, behind the safety net, reading
        through this runner's memos."""
        with memo.using(self.memos):
            return self._run_function(req)

    def _run_function(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        log = self.log.bind(tag=req.meta.tag)
        log.info("Running function")
        rsp = response.to(req)
        try:
            with collector_paused():
                self.compose(req, rsp)
        except required.Unfetched:
            return requirements_only(req, rsp)
        except Waiting as waiting:
            if required.unfetched(req, rsp):
                return requirements_only(req, rsp)
            # What was asked for stays asked for; what runs and what was published
            # stay as they are until it arrives.
            keep_observed(req, rsp)
            keep_status(req, rsp, self.published_status)
            condition = self.waiting_condition or self.validity_condition
            report.set_condition(
                rsp, report.Condition(condition, waiting.status, waiting.reason, waiting.message)
            )
        except (InvalidInputError, received.UndecodableList) as invalid:
            if required.unfetched(req, rsp):
                return requirements_only(req, rsp)
            # Start over, so nothing half-composed leaks out, but ask for the same
            # resources: Crossplane's fetch loop settles only while they stay the same.
            asked = rsp
            rsp = response.to(req)
            if asked.HasField("requirements"):
                rsp.requirements.CopyFrom(asked.requirements)
            keep_observed(req, rsp)
            keep_status(req, rsp, self.published_status)
            report.report_issues(rsp, self.validity_condition, invalid.issues, _UNREACHABLE)
        except Exception as exc:  # the safety net itself: see the module docstring
            log.exception("compose failed")
            rsp = response.to(req)
            report.fatal(rsp, Reason.INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")
            return rsp
        if required.unfetched(req, rsp):
            return requirements_only(req, rsp)
        if self.unready_when_invalid and _is_false(rsp, self.validity_condition):
            rsp.desired.composite.ready = fnv1.READY_FALSE
        return rsp

    @abc.abstractmethod
    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        """Fill rsp from req. Bad input becomes conditions and events, never an exception
        other than InvalidInputError."""


def requirements_only(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse
) -> fnv1.RunFunctionResponse:
    """The answer to a call whose requirements are not all fetched (`required.unfetched`):
    what the function was handed, unchanged (`response.to`), with the requirements and
    the context the compose left in `rsp`.

    Crossplane never keeps such a response: it fetches what was asked for and calls
    again, carrying over only the requirements and the context. Whatever else the
    compose decided would be thrown away, so none of it is sent (nor, where a
    function stops early, computed). See design/required-resources.md.
    """
    out = response.to(req)
    if rsp.HasField("context"):
        out.context.CopyFrom(rsp.context)
    else:
        out.ClearField("context")
    out.requirements.CopyFrom(rsp.requirements)
    return out


@contextmanager
def collector_paused() -> Generator[None]:
    """CPython's cyclic garbage collector, paused for one compose.

    A reconcile builds hundreds of thousands of objects that all live until it
    returns (the fleet as dicts, then as models); the collector would walk them
    again and again while they are built, which made reading a 1,000-cluster
    fleet several times slower (`modelplane bench parse`). Nothing a compose
    builds relies on cycle collection: reference counting frees it when the call
    returns, and the collector resumes for whatever cycles remain.
    """
    global _paused_by, _resume  # noqa: PLW0603 (one collector per process)
    with _pause_lock:
        if _paused_by == 0:
            _resume = gc.isenabled()
            gc.disable()
        _paused_by += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused_by -= 1
            if _paused_by == 0 and _resume:
                gc.enable()


# Composes run in threads at once: the collector stays paused until the last
# one returns, and resumes only if it ran before the first began.
_pause_lock = threading.Lock()
_paused_by = 0
_resume = False


def _is_false(rsp: fnv1.RunFunctionResponse, condition_type: str) -> bool:
    return any(
        c.type == condition_type and c.status == fnv1.STATUS_CONDITION_FALSE for c in rsp.conditions
    )


# InvalidInputError always carries an error, so report_issues never uses this.
_UNREACHABLE = report.Condition("", True, "")


@overload
def observed_composite(req: fnv1.RunFunctionRequest) -> dict[str, Any]: ...
@overload
def observed_composite(req: fnv1.RunFunctionRequest, model: type[M]) -> M: ...
def observed_composite(
    req: fnv1.RunFunctionRequest, model: type[M] | None = None
) -> dict[str, Any] | M:
    """The composite as observed; read into `model` (InvalidInputError naming every bad
    field) when one is given, which callers never change."""
    struct = req.observed.composite.resource
    if model is None:
        return to_dict(struct)
    # Crossplane sends the same composite on every call of a reconcile's fetch loop,
    # and again until it changes: a model read from those bytes before is shared.
    memos = memo.active()
    if memos is None:
        return parse_object(model, plain(struct), ints_restored=True)
    key = (model, digest(struct))
    known = memos.composites.get(key)
    if known is None:
        known = parse_object(model, plain(struct), ints_restored=True)
        memos.composites.put(key, known)
    return cast(M, known)


def observed_resources(req: fnv1.RunFunctionRequest) -> dict[str, dict[str, Any]]:
    """Composed resources as Crossplane observed them, keyed by composition resource name."""
    return {key: to_dict(item.resource) for key, item in req.observed.resources.items()}


_SERVER_SET_METADATA = ("name", "namespace", "labels", "annotations")


def set_status(rsp: fnv1.RunFunctionResponse, status: BaseModel) -> None:
    """Publish `status`, an instance of the composite's generated status model, as
    the desired composite's status: the one place a function writes it, so field
    names come from the model and are never spelled as strings. A field that is None
    or was never set is left out: a schema default the builder did not set (a
    device's `claim`) is not published, as a status built by hand never had it."""
    dumped = status.model_dump(by_alias=True, exclude_unset=True, exclude_none=True, mode="json")
    update(rsp.desired.composite.resource, {"status": dumped})


def keep_status(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, fields: tuple[str, ...]
) -> None:
    """Re-publish the observed composite's status `fields`, as they are: copied
    Struct to Struct, never through plain data (what is kept is not read)."""
    status = _struct_at(req.observed.composite.resource, "status")
    if status is None:
        return
    have = status.fields
    kept = [name for name in fields if name in have]
    if kept:
        published = rsp.desired.composite.resource.fields["status"]
        # Replaced whole, as Struct.update replaces the value of a key it sets.
        published.Clear()
        target = published.struct_value.fields
        for name in kept:
            target[name].CopyFrom(have[name])


def keep_observed(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, keys: set[str] | None = None
) -> list[str]:
    """Re-emit observed composed resources that the desired state lacks.

    Used when input is bad: Crossplane deletes whatever a function stops
    emitting, so we hand back what exists, as it is, instead of nothing. Only
    what a composed resource's owner may set (metadata identity and spec) is
    re-emitted; server-set fields such as resourceVersion would make the apply fail.
    Returns the keys re-emitted, sorted.

    Copied Struct to Struct: a held fleet's resources are re-emitted on every call
    of a fetch loop, and converting each to plain data and back cost more than the
    rest of such a call.
    """
    kept: list[str] = []
    for key in sorted(req.observed.resources):
        if (keys is not None and key not in keys) or key in rsp.desired.resources:
            continue
        observed = req.observed.resources[key].resource
        have = observed.fields
        desired = rsp.desired.resources[key]
        body = desired.resource.fields
        for name in ("apiVersion", "kind"):
            if name in have:
                body[name].CopyFrom(have[name])
            else:
                body[name].null_value = struct_pb2.NULL_VALUE
        metadata = body["metadata"].struct_value
        metadata.SetInParent()  # `{}` when the observed one has none of these
        found = _struct_at(observed, "metadata")
        if found is not None:
            for name in _SERVER_SET_METADATA:
                if name in found.fields:
                    metadata.fields[name].CopyFrom(found.fields[name])
        if "spec" in have:
            spec = body["spec"]
            spec.CopyFrom(have["spec"])
            # A composed composite's spec.crossplane (resourceRefs, compositionRef, ...)
            # belongs to Crossplane's reconciler of that composite, not to its parent.
            if (
                spec.WhichOneof("kind") == "struct_value"
                and "crossplane" in spec.struct_value.fields
            ):
                del spec.struct_value.fields["crossplane"]
        # Crossplane counts READY_UNSPECIFIED as not ready and never sets `ready` on
        # what it observes, so readiness is re-derived from the resource's own Ready
        # condition: a resource kept as it runs stays as ready as it is.
        desired.ready = fnv1.READY_TRUE if _ready(observed) else fnv1.READY_FALSE
        kept.append(key)
    return kept


def _ready(observed: struct_pb2.Struct) -> bool:
    """`condition_is(observed, "Ready", "True")`, converting only the resource's status:
    the one reader of conditions (`core.observed`) decides, on the status alone."""
    status = _struct_at(observed, "status")
    return status is not None and condition_is({"status": plain(status)}, "Ready", "True")


def _struct_at(struct: struct_pb2.Struct, name: str) -> struct_pb2.Struct | None:
    """The object at `name`, or None when it is absent or not an object."""
    if name not in struct.fields:
        return None
    value = struct.fields[name]
    return value.struct_value if value.WhichOneof("kind") == "struct_value" else None
