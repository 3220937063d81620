"""ReplicasScheduled: how a decision reads to people, and the warning when it falls short."""

from collections.abc import Sequence

from modelplane.core.condition import Condition
from modelplane.core.issues import Issue
from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.scheduling.budget import DecisionStopped
from modelplane.scheduling.decision import (
    ClusterTrace,
    DesiredReplica,
    Event,
    EventType,
)
from modelplane.scheduling.fleet import ClusterView, trace_role
from modelplane.scheduling.model import UNIFIED_ROLE, Deployment
from modelplane.scheduling.outcome import hold_note, plural
from modelplane.scheduling.rejections import Rejection
from modelplane.scheduling.retain import Kept
from modelplane.scheduling.selectors import SelectorEvaluator
from modelplane.scheduling.trace import availability

_UNADMITTED = (
    Rejection.STACK_INCOMPLETE,
    Rejection.TAINTED,
    Rejection.CLUSTER_UNREACHABLE,
    Rejection.BACKEND_UNSUPPORTED,
    Rejection.POD_SECURITY_VIOLATION,
    Rejection.NO_MODEL_CACHE_STORAGE,
)


def _lacking(views: dict[str, ClusterView], *reasons: Rejection) -> int:
    """Selected clusters turned down only for one of `reasons` (a gap in their stack,
    a taint, their health), not for their hardware."""
    return sum(
        1
        for view in views.values()
        if view.unmatched is not None and view.unmatched.reason in reasons
    )


def _selector_errors(trace: Sequence[ClusterTrace]) -> str:
    """When every pool was turned down because the selectors failed to evaluate on all
    its devices (a misspelt attribute, not hardware that does not fit), the first
    failure, to follow the message; else nothing."""
    errors = [pool.selector_error for cluster in trace for pool in cluster.pools]
    if not errors or not all(errors):
        return ""
    return f": its selectors failed to evaluate on every device ({errors[0]})"


def _none_eligible(
    views: dict[str, ClusterView], selected: int, trace: Sequence[ClusterTrace]
) -> str:
    """Why none of the `selected` clusters can take a new replica."""
    unadmitted = _lacking(views, *_UNADMITTED)
    if _lacking(views, Rejection.STACK_INCOMPLETE) == selected:
        verb = "lacks" if selected == 1 else "lack"
        return (
            f"the {plural(selected, 'selected cluster')} {verb} prerequisites its replicas "
            "need (see the match trace)"
        )
    refusing = [
        view.unmatched.message
        for view in views.values()
        if view.unmatched is not None and view.unmatched.reason is Rejection.POD_SECURITY_VIOLATION
    ]
    if refusing and len(refusing) == selected:
        # The template, not the fleet: say what to change in it.
        verb = "refuses" if selected == 1 else "refuse"
        return f"the {plural(selected, 'selected cluster')} {verb} its template: {refusing[0]}"
    full = _lacking(views, Rejection.QUEUE_FULL)
    if full:
        # A full queue is capacity: blaming the nodeSelector for those clusters would
        # send the team to fix a spec that matches them.
        verb = "has" if full == 1 else "have"
        quota = (
            f"{plural(full, 'selected cluster')} {verb} no quota left for it in the "
            "namespace's in-cluster queue"
        )
        if full == selected:
            return f"the {quota} (see the match trace)"
        rest = selected - full
        others = "the other cluster takes" if rest == 1 else f"the other {rest} clusters take"
        return f"{quota}, and {others} no new replica of it (see the match trace)"
    what = "tainted, unreachable, lacking prerequisites its replicas need or unable to run them"
    if unadmitted == selected:
        verb = "is" if selected == 1 else "are"
        return f"the {plural(selected, 'selected cluster')} {verb} {what} (see the match trace)"
    if unadmitted:
        # Some turn every replica away whatever their pools (an unreachable cluster):
        # naming only the nodeSelector would blame the spec for them too.
        verb = "is" if unadmitted == 1 else "are"
        rest = selected - unadmitted
        others = "the other cluster" if rest == 1 else f"the other {rest} clusters"
        return (
            f"{plural(unadmitted, 'selected cluster')} {verb} {what}, and no pool on {others} "
            "matches the nodeSelector (see the match trace)"
        )
    return (
        f"no pool on the {plural(selected, 'selected cluster')} matches the nodeSelector"
        f"{_selector_errors(trace)}"
    )


def scheduled_condition(
    deployment: Deployment,
    views: dict[str, ClusterView],
    kept: Sequence[Kept],
    placed: Sequence[DesiredReplica],
    *,
    selected: int,
    eligible: int,
    holding: bool,
    unreadable: int,
    trace: Sequence[ClusterTrace],
    preempted_by: Sequence[str] = (),
) -> tuple[Condition, list[Event]]:
    """ReplicasScheduled, and a warning event whenever it is False (then ending the way
    kube-scheduler's does: how many clusters each reason turned down)."""
    scheduled = len(kept) + len(placed)
    wanted = deployment.replicas
    # The trace is only read for why replicas are missing: a fleet's worth of entries.
    short = scheduled < wanted
    if not views and unreadable:
        reason = Reason.NO_CLUSTERS
        why = f"no readable InferenceClusters in the fleet ({unreadable} cannot be read)"
    elif not views:
        reason, why = Reason.NO_CLUSTERS, "no InferenceClusters in the fleet"
    elif selected == 0:
        reason = Reason.NO_CLUSTERS
        why = (
            "no InferenceCluster passes the clusterSelector and the priority allow-list "
            f"({plural(len(views), 'cluster')} checked)"
        )
    elif eligible == 0:
        reason = Reason.INSUFFICIENT_CAPACITY
        if _lacking(views, Rejection.POD_SECURITY_VIOLATION) == selected:
            reason = Reason.POD_SECURITY_VIOLATION  # the template, not the fleet
        why = _none_eligible(views, selected, trace)
    elif short and (
        preempted_by or any(p.reason == Rejection.PREEMPTED for entry in trace for p in entry.pools)
    ):
        reason = Reason.PREEMPTED
        where = f" (on {', '.join(preempted_by[:3])})" if preempted_by else ""
        why = (
            "preempted: replicas of higher priority, which may preempt it, hold the room"
            f"{where}, and the {plural(eligible, 'eligible cluster')} have none left for it"
        )
    elif short and any(entry.reason == Rejection.SPREAD_CONSTRAINT for entry in trace):
        reason = Reason.INSUFFICIENT_CAPACITY
        why = (
            f"no room for more on the {plural(eligible, 'eligible cluster')} within the "
            "spread constraints"
        )
    else:
        reason = Reason.INSUFFICIENT_CAPACITY
        why = f"no room for more on the {plural(eligible, 'eligible cluster')}"
    if holding:
        message = f"{why}{hold_note(kept)}"
    elif wanted == 0:
        return Condition(
            ConditionType.REPLICAS_SCHEDULED, True, Reason.ALL_SCHEDULED, "no replicas requested"
        ), []
    elif scheduled >= wanted:
        hosts = {item.replica.cluster for item in kept} | {r.cluster for r in placed}
        message = f"{wanted} of {wanted} replicas scheduled across {plural(len(hosts), 'cluster')}"
        if scheduled > wanted:
            # Old replicas a rollout keeps beside their replacements (`rollout`).
            message += f", and {scheduled - wanted} more while a rollout replaces old ones"
        return Condition(ConditionType.REPLICAS_SCHEDULED, True, Reason.ALL_SCHEDULED, message), []
    else:
        message = f"{scheduled} of {wanted} replicas scheduled: {why}"
    named = len({entry.cluster for entry in trace} | set(views))
    if named:
        message = f"{message}; {availability(trace, named)}"
    return Condition(ConditionType.REPLICAS_SCHEDULED, False, reason, message), [
        Event(EventType.WARNING, reason, message)
    ]


def node_selector_problems(deployment: Deployment, evaluator: SelectorEvaluator) -> list[Issue]:
    """InvalidNodeSelector, naming the field, for each device selector that does not
    compile; DecisionStopped, located at its request and role, when compiling runs
    out of the decision's budget."""
    problems: list[Issue] = []
    for role in deployment.roles:
        base = (
            "spec.nodeSelector" if role.name == UNIFIED_ROLE else f"spec.{role.name}.nodeSelector"
        )
        for i, request in enumerate(role.requests):
            for j, expression in enumerate(request.selectors):
                try:
                    error = evaluator.compile_error(expression)
                except DecisionStopped as stop:
                    stop.locate(
                        request=request.name,
                        role=trace_role(role.name),
                    )
                    raise
                if error is not None:
                    path = f"{base}.devices[{i}].selectors[{j}].cel"
                    problems.append(Issue(path, error, Reason.INVALID_NODE_SELECTOR))
    return problems
