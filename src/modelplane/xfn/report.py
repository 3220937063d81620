"""Conditions and events, with reasons from the shared vocabulary.

A condition is the core's `Condition` (`modelplane.core.condition`), set as it is.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Sequence

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.condition import Condition
from modelplane.core.issues import Issue, errors, unique

__all__ = ["Condition", "fatal", "normal", "report_issues", "set_condition", "warning"]

_STATUS = {
    True: fnv1.STATUS_CONDITION_TRUE,
    False: fnv1.STATUS_CONDITION_FALSE,
    None: fnv1.STATUS_CONDITION_UNKNOWN,
}


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


def report_issues(
    rsp: fnv1.RunFunctionResponse,
    condition_type: str,
    issues: Sequence[Issue],
    ok: Condition,
    *,
    failed_reason: str | None = None,
) -> bool:
    """Turn a list of issues into `condition_type` plus one Warning event each.

    With any Error the condition is False, carries `failed_reason` (by default
    the first error's reason) and lists every error; otherwise it is `ok`, whose
    message notes how many warnings there were. Every issue, Error or Warning, is
    a Warning event naming its field, with its own reason, in the order given,
    each once. Returns whether there was no Error.
    """
    found = unique(issues)
    for issue in found:
        warning(rsp, issue.reason, str(issue))
    failed = errors(found)
    if failed:
        message = "; ".join(map(str, failed))
        reason = failed_reason or failed[0].reason
        set_condition(rsp, Condition(condition_type, False, reason, message))
        return False
    message = ok.message
    if found:
        message += f" ({len(found)} warning{'s' if len(found) != 1 else ''})"
    set_condition(rsp, Condition(condition_type, ok.status, ok.reason, message))
    return True
