"""Running one composite's Composition pipeline, the way Crossplane's reconciler does.

Steps run in order; each sees the same observed snapshot, the desired state and
context the previous step returned, and its own requirements loop. The first fatal
result (or failed call) stops the pipeline, and the caller then applies nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from modelplane.core.vocabulary import CONTEXT_MATCH_TRACE, CONTEXT_NOW
from modelplane.xfn.memo import Memos, using
from modelplane.xfn.structs import serialized, to_dict, to_struct
from modelplane_cli.render import requirements, wire
from modelplane_cli.render.apis import Apis, Composition, PipelineStep
from modelplane_cli.render.clock import EPOCH
from modelplane_cli.render.runners import FunctionCallError, FunctionClient, FunctionNotFoundError
from modelplane_cli.render.world import Obj, ObjectKey, View, World
from modelplane_cli.schema.errors import go_quote

# Crossplane's MaxRequirementsIterations: one call plus this many re-calls.
MAX_REQUIREMENTS_ITERATIONS = 5
REASON_COMPOSE = "ComposeResources"

_CAPABILITIES = (
    fnv1.CAPABILITY_CAPABILITIES,
    fnv1.CAPABILITY_REQUIRED_RESOURCES,
    fnv1.CAPABILITY_CREDENTIALS,
    fnv1.CAPABILITY_CONDITIONS,
    fnv1.CAPABILITY_REQUIRED_SCHEMAS,
)
_EVENT_TYPE = {fnv1.SEVERITY_WARNING: "Warning", fnv1.SEVERITY_NORMAL: "Normal"}
_STATUS = {
    fnv1.STATUS_CONDITION_TRUE: "True",
    fnv1.STATUS_CONDITION_FALSE: "False",
}


@dataclass(frozen=True)
class Event:
    type: str
    reason: str
    message: str


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str = ""

    def as_dict(self) -> Obj:
        out: Obj = {"type": self.type, "status": self.status, "reason": self.reason}
        if self.message:
            out["message"] = self.message
        return out


@dataclass(frozen=True)
class DesiredResource:
    obj: Obj
    ready: bool


@dataclass
class PipelineOutcome:
    """The desired state after the last step, or why the pipeline stopped."""

    composite_status: Obj | None = None
    composite_ready: bool | None = None
    resources: dict[str, DesiredResource] = field(default_factory=dict)
    conditions: list[Condition] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    # The error is a step's fatal result, which keeps the events and conditions so far.
    fatal: bool = False
    # The smallest non-zero `meta.ttl` any step returned, in seconds (Crossplane's
    # pipeline TTL, after which the composite is requeued); None when none did.
    ttl: float | None = None


class _StepFailedError(Exception):
    pass


async def run_pipeline(
    xr: View,
    composition: Composition,
    observed: Mapping[str, View],
    world: World,
    apis: Apis,
    functions: FunctionClient,
    *,
    now: str = EPOCH,
    traced: Sequence[str] = (),
) -> PipelineOutcome:
    outcome = PipelineOutcome()
    # The composite as stored (it is, once its first reconcile wrote its labels and
    # uid) goes as the world's serialized Struct of it, made once per change of the
    # object; the observed state is written once, from those bytes, for every call.
    key = ObjectKey.of(xr)
    composite = world.serialized(key) if world.get(key) == xr else serialized(dict(xr))
    observed_state = wire.state(
        composite,
        {name: world.serialized(ObjectKey.of(obj)) for name, obj in observed.items()},
    )
    desired = fnv1.State()
    context: struct_pb2.Struct | None = struct_pb2.Struct()
    # The render clock (`clock`): functions read now from here, never the wall clock.
    context.update({CONTEXT_NOW: now})
    if traced:
        # `--trace`: these ModelDeployments' match traces name every cluster.
        context.update({CONTEXT_MATCH_TRACE: list(traced)})
    for step in composition.steps:
        try:
            response = await _run_step(
                step, observed_state, desired, context, world, apis, functions
            )
        except _StepFailedError as exc:
            outcome.error = str(exc)
            return outcome
        _note_ttl(response, outcome)
        fatal = _collect(step, response, outcome)
        if fatal is not None:
            outcome.error = f"pipeline step {go_quote(step.name)} returned a fatal result: {fatal}"
            outcome.fatal = True
            return outcome
        desired = response.desired
        # What the step answered is what the next step gets: no context when it sent
        # none (`fctx = rsp.GetContext()`, nil when unset).
        context = response.context if response.HasField("context") else None
    _read_desired(desired, outcome, world.memos)
    return outcome


async def _run_step(
    step: PipelineStep,
    observed: bytes,
    desired: fnv1.State,
    context: struct_pb2.Struct | None,
    world: World,
    apis: Apis,
    functions: FunctionClient,
) -> fnv1.RunFunctionResponse:
    body = fnv1.RunFunctionRequest(desired=desired)
    if context is not None:
        body.context.CopyFrom(context)
    if step.input is not None:
        body.input.CopyFrom(to_struct(dict(step.input)))
    for source in step.credentials:
        try:
            body.credentials[source.name].CopyFrom(requirements.credentials(world, source))
        except requirements.CredentialsError as exc:
            # Crossplane's errFmtGetCredentialsFromSecret.
            raise _StepFailedError(
                f"cannot get Composition pipeline step {go_quote(step.name)} credential "
                f"{go_quote(source.name)} from Secret: {exc}"
            ) from exc
    bootstrap = {
        r.name: requirements.fetch(world, requirements.bootstrap_selector(r))
        for r in step.requirements
    }
    bootstrap_schemas = {
        s.name: requirements.schema(
            apis, fnv1.SchemaSelector(api_version=s.api_version, kind=s.kind)
        )
        for s in step.schemas
    }
    request = wire.RequestParts(
        _CAPABILITIES, body, dict(bootstrap), dict(bootstrap_schemas), observed=observed
    )
    # Crossplane tags the step's request once, before its first call, over what it
    # holds then (bootstrap requirements only); every requirements iteration is
    # sent with that tag (`FetchingFunctionRunner` never touches `req.Meta`).
    tag = request.tag()

    previous: bytes | None = None
    for _ in range(MAX_REQUIREMENTS_ITERATIONS + 1):
        try:
            response = await functions.run(step.function, request.serialize(tag))
        except FunctionNotFoundError as exc:
            # Crossplane's errFmtGetClientConn: no active FunctionRevision to dial.
            raise _StepFailedError(
                f"{_run_step_error(step)}: cannot get gRPC client connection for Function "
                f"{go_quote(step.function)}: {exc}"
            ) from exc
        except FunctionCallError as exc:
            raise _StepFailedError(
                f"{_run_step_error(step)}: cannot run Function {go_quote(step.function)}: {exc}"
            ) from exc
        if any(r.severity == fnv1.SEVERITY_FATAL for r in response.results):
            return response
        current = _requirements_fingerprint(response)
        if current == previous:
            return response
        previous = current
        request.required = dict(bootstrap)
        for name, selector in sorted(response.requirements.resources.items()):
            request.required[name] = requirements.fetch(world, selector)
        # The bootstrap schemas stay on every iteration, as the bootstrap resources do.
        request.schemas = dict(bootstrap_schemas)
        for name, schema_selector in sorted(response.requirements.schemas.items()):
            request.schemas[name] = requirements.schema(apis, schema_selector)
        # Crossplane carries the answer's context to the next call, none included
        # (`req.Context = rsp.GetContext()`).
        if response.HasField("context"):
            body.context.CopyFrom(response.context)
        else:
            body.ClearField("context")
    raise _StepFailedError(
        f"{_run_step_error(step)}: requirements didn't stabilize after the "
        f"maximum number of iterations ({MAX_REQUIREMENTS_ITERATIONS})"
    )


def _run_step_error(step: PipelineStep) -> str:
    """Crossplane's errFmtRunPipelineStep, which wraps every failed call of a step."""
    return f"cannot run Composition pipeline step {go_quote(step.name)}"


def _requirements_fingerprint(response: fnv1.RunFunctionResponse) -> bytes | None:
    """Requirements in a comparable form; None when the response set none at all.

    Crossplane compares successive requirements with proto.Equal, for which an
    unset message differs from a set empty one; None keeps that distinction.
    """
    if not response.HasField("requirements"):
        return None
    return response.requirements.SerializeToString(deterministic=True)


def _collect(
    step: PipelineStep, response: fnv1.RunFunctionResponse, outcome: PipelineOutcome
) -> str | None:
    """Record a step's conditions and results; return the first fatal message, if any."""
    for condition in response.conditions:
        outcome.conditions.append(
            Condition(
                type=condition.type,
                status=_STATUS.get(condition.status, "Unknown"),
                reason=condition.reason,
                message=condition.message if condition.HasField("message") else "",
            )
        )
    for result in response.results:
        # An empty reason is Crossplane's own ComposeResources, as an unset one is.
        reason = result.reason or REASON_COMPOSE
        if result.severity == fnv1.SEVERITY_FATAL:
            return result.message
        if result.severity == fnv1.SEVERITY_UNSPECIFIED:
            # What a function built against a newer protocol might send: a Warning on
            # the composite, in the composer's own words (`composition_functions.go`).
            message = (
                f"Pipeline step {go_quote(step.name)} returned a result of unknown severity "
                f"(assuming warning): {result.message}"
            )
            outcome.events.append(Event("Warning", reason, message))
            continue
        kind = _EVENT_TYPE.get(result.severity)
        if kind is not None:
            message = f"Pipeline step {go_quote(step.name)}: {result.message}"
            outcome.events.append(Event(kind, reason, message))
    return None


def _note_ttl(response: fnv1.RunFunctionResponse, outcome: PipelineOutcome) -> None:
    if not response.meta.HasField("ttl"):
        return
    seconds = response.meta.ttl.seconds + response.meta.ttl.nanos / 1e9
    if seconds > 0 and (outcome.ttl is None or seconds < outcome.ttl):
        outcome.ttl = seconds


def _read_desired(desired: fnv1.State, outcome: PipelineOutcome, memos: Memos) -> None:
    # A function answers most of the same resources again, round after round: each
    # is converted once (`structs.to_dict`), then copied from the engine's memo.
    with using(memos):
        _read_desired_state(desired, outcome)


def _read_desired_state(desired: fnv1.State, outcome: PipelineOutcome) -> None:
    if desired.HasField("composite"):
        composite = to_dict(desired.composite.resource)
        status = composite.get("status")
        outcome.composite_status = status if isinstance(status, dict) else None
        if desired.composite.ready != fnv1.READY_UNSPECIFIED:
            outcome.composite_ready = desired.composite.ready == fnv1.READY_TRUE
    for name in sorted(desired.resources):
        resource = desired.resources[name]
        outcome.resources[name] = DesiredResource(
            obj=to_dict(resource.resource), ready=resource.ready == fnv1.READY_TRUE
        )
