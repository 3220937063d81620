"""Conditions and events, with reasons from the shared vocabulary."""

from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

_STATUS = {
    True: fnv1.STATUS_CONDITION_TRUE,
    False: fnv1.STATUS_CONDITION_FALSE,
    None: fnv1.STATUS_CONDITION_UNKNOWN,
}


@dataclass(frozen=True)
class Condition:
    type: str
    status: bool | None
    reason: str
    message: str = ""


def set_condition(rsp: fnv1.RunFunctionResponse, condition: Condition) -> None:
    """Set (or replace) one condition on the composite."""
    for existing in rsp.conditions:
        if existing.type == condition.type:
            rsp.conditions.remove(existing)
            break
    rsp.conditions.append(
        fnv1.Condition(
            type=condition.type,
            status=_STATUS[condition.status],
            reason=condition.reason,
            message=condition.message or None,
            target=fnv1.TARGET_COMPOSITE,
        )
    )


def warning(rsp: fnv1.RunFunctionResponse, reason: str, message: str) -> None:
    """A Warning event on the composite. Messages name the offending field."""
    _result(rsp, fnv1.SEVERITY_WARNING, reason, message)


def normal(rsp: fnv1.RunFunctionResponse, reason: str, message: str) -> None:
    _result(rsp, fnv1.SEVERITY_NORMAL, reason, message)


def fatal(rsp: fnv1.RunFunctionResponse, reason: str, message: str) -> None:
    """Stop the pipeline. Crossplane then neither applies nor deletes anything."""
    _result(rsp, fnv1.SEVERITY_FATAL, reason, message)


def _result(rsp: fnv1.RunFunctionResponse, severity: int, reason: str, message: str) -> None:
    rsp.results.append(
        fnv1.Result(
            severity=severity,  # type: ignore[arg-type]
            message=message,
            reason=reason,
            target=fnv1.TARGET_COMPOSITE,
        )
    )
