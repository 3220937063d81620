"""Keep new replicas off a cluster whose stack lacks what they need.

A cluster publishes what its stack lacks (`status.stack.missing`, read into
`StackGaps`), each gap with the replicas it keeps away: every replica, those with
a multi-node worker, those at a priority, those of a namespace, or (on a pool)
those that would claim a device of a missing DeviceClass: a match whose ways of
claiming all name one loses the pool, one with another way keeps only that. The filter asks this
module after matching; a cluster it rejects is still selected, so replicas
already there are not dropped: they report why they cannot serve and move
make-before-break (`moves.unrunnable`), and new ones go elsewhere.
"""

from modelplane.core.priority import resolve_priority
from modelplane.scheduling.decision import PoolTrace
from modelplane.scheduling.matching import RoleMatch
from modelplane.scheduling.model import Cluster, Deployment, Pool
from modelplane.scheduling.rejections import Rejected, Rejection

RoleOptions = tuple[tuple[Pool, RoleMatch], ...]


def _lacks(what: tuple[str, ...] | list[str], who: str) -> Rejected:
    return Rejected(
        Rejection.STACK_INCOMPLETE, f"the cluster lacks {', '.join(what)}, which {who} need"
    )


def check_stack(
    deployment: Deployment,
    cluster: Cluster,
    options: tuple[RoleOptions, ...],
    role_labels: tuple[str | None, ...],
) -> tuple[Rejected | None, tuple[RoleOptions, ...], tuple[PoolTrace, ...]]:
    """Whether the cluster's gaps keep the deployment's new replicas off it: the
    rejection, the pool options left, and a trace entry per pool a gap rules out.
    `role_labels` is the trace's role for each role (None for a unified one)."""
    gaps = cluster.stack
    if gaps.everything:
        return _lacks(gaps.everything, "every replica"), options, ()
    if gaps.multi_node and any(r.topology.nodes_per_worker > 1 for r in deployment.roles):
        return _lacks(gaps.multi_node, "multi-node replicas"), options, ()
    priority = resolve_priority(deployment.priority, cluster.default_priority)
    if priority is not None and priority in gaps.priorities:
        return (
            _lacks([gaps.priorities[priority]], f"replicas at priority {priority!r}"),
            options,
            (),
        )
    if deployment.namespace in gaps.namespaces:
        who = f"replicas from namespace {deployment.namespace}"
        return _lacks(gaps.namespaces[deployment.namespace], who), options, ()
    if not gaps.device_classes:
        return None, options, ()
    kept: list[RoleOptions] = []
    traces: list[PoolTrace] = []
    empty: list[str] = []
    for role_options, label in zip(options, role_labels, strict=True):
        left: list[tuple[Pool, RoleMatch]] = []
        for pool, match in role_options:
            # A match may claim the role's requests in several ways (options naming
            # different device classes): only those whose classes all exist remain.
            usable = tuple(
                option
                for option in match.options
                if not any(c.device_class_name in gaps.device_classes for c in option.claims)
            )
            if usable:
                left.append((pool, match if usable == match.options else RoleMatch(usable)))
                continue
            lacking = sorted(
                {
                    gaps.device_classes[c.device_class_name]
                    for option in match.options
                    for c in option.claims
                    if c.device_class_name in gaps.device_classes
                }
            )
            message = f"the cluster lacks {', '.join(lacking)}, which its devices need"
            traces.append(PoolTrace(pool.name, Rejection.STACK_INCOMPLETE, message, label))
        if role_options and not left:
            empty.append(f"role {label}" if label else "the nodeSelector")
        kept.append(tuple(left))
    rejected = None
    if empty:
        rejected = Rejected(
            Rejection.STACK_INCOMPLETE,
            f"every pool matching {' or '.join(empty)} lacks its DeviceClass on the cluster",
        )
    return rejected, tuple(kept), tuple(traces)
