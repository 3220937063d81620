"""Filter: which clusters and pools can host a replica of the deployment, and why not.

A cluster is considered when it passes the clusterSelector and its allow-list
admits the deployment's resolved priority; it is eligible when, in addition,
every role has at least one pool whose node satisfies the role's requests, and
it carries no taint the deployment does not tolerate and is reachable (`taints`), its
backend can run the replica (`backends`), its
in-cluster queue for the deployment's namespace has quota left for a replica
(`queues`), and its stack lacks nothing the deployment's replicas need (`stack`).
Capacity is not looked at here: the ledger decides that when filling.

Matching is memoised per distinct pool hardware, and so are the trace entries
of rejected pools, so a fleet of thousands of clusters built from a few classes
costs a few dictionary lookups per pool.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from modelplane_models.inference_cluster import BackendType

from modelplane.core.priority import priority_allowed, resolve_priority
from modelplane.scheduling import pod_security
from modelplane.scheduling.backends import refusal
from modelplane.scheduling.budget import DecisionStopped
from modelplane.scheduling.decision import PoolTrace
from modelplane.scheduling.label_selector import CompiledLabelSelector
from modelplane.scheduling.matching import Matcher, Mismatch, RoleMatch
from modelplane.scheduling.model import (
    CLUSTER_LABEL,
    UNIFIED_ROLE,
    Cluster,
    Deployment,
    Pool,
    PoolHardware,
)
from modelplane.scheduling.queues import queue_room
from modelplane.scheduling.rejections import Rejected, Rejection
from modelplane.scheduling.stack import check_stack
from modelplane.scheduling.taints import admits

RoleOptions = tuple[tuple[Pool, RoleMatch], ...]


# Not frozen: one view is built per cluster on every decision, and a frozen
# dataclass's __init__ costs three times as much. Nothing assigns to a view.
@dataclass(slots=True)
class ClusterView:
    """One cluster as the filter saw it.

    `excluded` says why the clusterSelector or the priority allow-list rejects
    the cluster; `unmatched` says which role no pool can serve. `options[r]` are
    the pools (in published order) whose nodes satisfy role r, with the match.
    """

    cluster: Cluster
    excluded: Rejected | None
    unmatched: Rejected | None
    options: tuple[RoleOptions, ...]
    rejected_pools: tuple[PoolTrace, ...]
    queue_room: int | None = None
    """New replicas its in-cluster queue still lets in (`queues`); None: not bounded."""

    @property
    def selected(self) -> bool:
        return self.excluded is None

    @property
    def eligible(self) -> bool:
        return self.excluded is None and self.unmatched is None

    @property
    def rejection(self) -> Rejected | None:
        return self.excluded or self.unmatched

    @property
    def spread_domain(self) -> bool:
        """Whether its topology values are spread domains (`spread`): eligible, or
        refused only because its in-cluster queue is full, which is capacity, and a
        full domain still counts, as a full node does for Pod topology spread."""
        return self.excluded is None and (
            self.unmatched is None or self.unmatched.reason is Rejection.QUEUE_FULL
        )


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a cluster's pools offer the deployment, whatever the cluster."""

    options: tuple[RoleOptions, ...]
    rejected: tuple[PoolTrace, ...]
    unmatched: Rejected | None


def _role_label(role: str) -> str:
    return "the nodeSelector" if role == UNIFIED_ROLE else f"role {role}"


def trace_role(role: str) -> str | None:
    """The role a pool trace names: none for a unified deployment, whose one role is implied."""
    return None if role == UNIFIED_ROLE else role


class FleetFilter:
    """Evaluates clusters for one deployment, memoising per pool hardware."""

    def __init__(
        self, deployment: Deployment, selector: CompiledLabelSelector, matcher: Matcher
    ) -> None:
        self._deployment = deployment
        self._selector = selector
        # `modelplane.ai/cluster` is every cluster's implicit label: added only for a
        # selector that names it, so the common case reads the labels as they are.
        self._implicit = any(r.key == CLUSTER_LABEL for r in selector.requirements)
        self._matcher = matcher
        self._roles = deployment.roles
        # PoolHardware caches its hash, and a dict compares identity before
        # content, so the parser's shared hardware objects hit at pointer cost.
        self._hardware: dict[PoolHardware, tuple[RoleMatch | Mismatch, ...]] = {}
        self._pool_traces: dict[tuple[str, PoolHardware], tuple[PoolTrace, ...]] = {}
        self._layouts: dict[int, tuple[tuple[Pool, ...], _Layout]] = {}
        self._versions: dict[str, Rejected | None] = {}
        self._no_options: tuple[RoleOptions, ...] = tuple(() for _ in self._roles)

    @property
    def matcher(self) -> Matcher:
        return self._matcher

    def matches(self, hardware: PoolHardware) -> tuple[RoleMatch | Mismatch, ...]:
        """Each role's match against one node of this hardware."""
        results = self._hardware.get(hardware)
        if results is None:
            found: list[RoleMatch | Mismatch] = []
            for role in self._roles:
                try:
                    found.append(self._matcher.match(role.requests, hardware, role.constraints))
                except DecisionStopped as stop:
                    stop.locate(role=trace_role(role.name))
                    raise
            results = tuple(found)
            self._hardware[hardware] = results
        return results

    def _pool_trace(self, pool: Pool) -> tuple[PoolTrace, ...]:
        key = (pool.name, pool.hardware)
        traces = self._pool_traces.get(key)
        if traces is None:
            results = self.matches(pool.hardware)
            traces = tuple(
                PoolTrace(
                    pool.name,
                    result.reason,
                    result.message,
                    trace_role(role.name),
                    result.selector_error,
                )
                for role, result in zip(self._roles, results, strict=True)
                if isinstance(result, Mismatch)
            )
            self._pool_traces[key] = traces
        return traces

    def excluded(self, cluster: Cluster) -> Rejected | None:
        """Why the clusterSelector or the allow-list rejects the cluster, if they do."""
        if self._selector.requirements:
            labels = cluster.labels
            if self._implicit:
                labels = {**labels, CLUSTER_LABEL: cluster.name}
            reason = self._selector.explain(labels)
            if reason is not None:
                return Rejected(
                    Rejection.CLUSTER_SELECTOR_MISMATCH,
                    f"clusterSelector does not match: {reason}",
                )
        if cluster.refused_default is not None and not self._deployment.priority:
            # Never resolved to a priority the cluster's own block refuses (its
            # SchedulingConfigured condition names the field), nor to none in its place.
            return Rejected(
                Rejection.PRIORITY_NOT_ALLOWED,
                "the deployment names no priority and the cluster's "
                f"spec.scheduling.defaultPriority is refused: {cluster.refused_default}",
            )
        allowed = cluster.allowed_priorities
        if not allowed:
            return None
        resolved = resolve_priority(self._deployment.priority, cluster.default_priority)
        if not priority_allowed(resolved, list(allowed)):
            listed = ", ".join(allowed)
            return Rejected(
                Rejection.PRIORITY_NOT_ALLOWED,
                f"priority {resolved!r} is not in allowedPriorities [{listed}]",
            )
        return None

    def unserved(self, kubernetes_version: str) -> Rejected | None:
        """Why an API server at `kubernetes_version` would refuse the claims of the
        deployment's replicas, if it would: a selector its version does not compile (a
        function or a use of list attributes a later release brings). The scheduler
        checks the deployment's selectors as stored ones, in the newest environment;
        a new ResourceClaimTemplate is checked in its cluster's."""
        if kubernetes_version in self._versions:
            return self._versions[kubernetes_version]
        evaluator = self._matcher.evaluator
        found = None
        for role in self._roles:
            for request in role.requests:
                for expression in request.selectors:
                    try:
                        error = evaluator.version_error(expression, kubernetes_version)
                    except DecisionStopped as stop:
                        stop.locate(request=request.name, role=trace_role(role.name))
                        raise
                    if error is not None and found is None:
                        where = "" if role.name == UNIFIED_ROLE else f"role {role.name} "
                        found = Rejected(
                            Rejection.SELECTOR_MISMATCH,
                            f"{where}request {request.name!r}: selector {expression!r} does "
                            f"not compile on Kubernetes {kubernetes_version}, whose API server "
                            f"would refuse the replica's ResourceClaimTemplate: {error}",
                        )
        self._versions[kubernetes_version] = found
        return found

    def _layout(self, pools: tuple[Pool, ...]) -> "_Layout":
        # Keyed by identity: the parser shares one tuple between clusters with the
        # same pools, so a fleet stamped from a few layouts costs one lookup per
        # cluster. The value keeps the tuple alive, so its id cannot be reused.
        entry = self._layouts.get(id(pools))
        if entry is not None:
            return entry[1]
        options: list[list[tuple[Pool, RoleMatch]]] = [[] for _ in self._roles]
        rejected: list[PoolTrace] = []
        for pool in pools:
            try:
                matches = self.matches(pool.hardware)
            except DecisionStopped as stop:
                stop.locate(pool=pool.name)
                raise
            for r, result in enumerate(matches):
                if isinstance(result, RoleMatch):
                    options[r].append((pool, result))
            rejected.extend(self._pool_trace(pool))
        unmatched = None
        if not pools:
            unmatched = Rejected(Rejection.NO_POOLS, "publishes no GPU pools")
        else:
            missing = [role.name for role, o in zip(self._roles, options, strict=True) if not o]
            if missing:
                labels = " or ".join(_role_label(name) for name in missing)
                unmatched = Rejected(Rejection.NO_MATCHING_POOL, f"no pool matches {labels}")
        # Sorted once here, so the trace of a cluster with no capacity rejection
        # is this tuple as it stands.
        rejected.sort(key=PoolTrace.order)
        layout = _Layout(tuple(tuple(o) for o in options), tuple(rejected), unmatched)
        self._layouts[id(pools)] = (pools, layout)
        return layout

    def view(self, cluster: Cluster) -> ClusterView:
        excluded = self.excluded(cluster)
        if excluded is not None:
            return ClusterView(cluster, excluded, None, (), ())
        if cluster.kubernetes_version is not None:
            unserved = self.unserved(cluster.kubernetes_version)
            if unserved is not None:
                # Every pool would be refused alike: one entry for the cluster says it.
                return ClusterView(cluster, None, unserved, self._no_options, ())
        layout = self._layout(cluster.pools)
        # A taint keeps new replicas off a cluster that stays selected, so the
        # replicas already there are retained (or, under NoExecute, moved).
        # Most clusters carry no taint and no queue figures: skip the calls for them.
        tainted = None
        if cluster.taints or not cluster.reachable:
            tainted = admits(cluster, self._deployment)
        if tainted is None and cluster.backend != BackendType.NATIVE:
            # Its backend cannot render the replica (`backends`): filtered before placing.
            tainted = refusal(cluster, self._deployment)
        if tainted is None and self._deployment.baseline_issues:
            # Its tenant namespaces must not run the template (`pod_security`).
            tainted = pod_security.refusal(cluster, self._deployment)
        if tainted is not None and layout.unmatched is None:
            return ClusterView(cluster, None, tainted, layout.options, layout.rejected)
        room, full = queue_room(cluster, self._deployment) if cluster.queues else (None, None)
        if layout.unmatched is not None:
            return ClusterView(
                cluster, None, layout.unmatched, layout.options, layout.rejected, room
            )
        lacking = None
        if cluster.stack:
            labels = tuple(trace_role(role.name) for role in self._roles)
            lacking, options, traces = check_stack(
                self._deployment, cluster, layout.options, labels
            )
            # A stack that cannot run the replica rules the cluster out before its queue
            # is looked at: a full queue is capacity, and keeps the cluster a spread
            # domain (`ClusterView.spread_domain`), which a missing prerequisite must not.
            if lacking is not None or full is None:
                rejected = tuple(sorted(layout.rejected + traces, key=PoolTrace.order))
                return ClusterView(cluster, None, lacking, options, rejected, room)
        if full is not None:
            return ClusterView(cluster, None, full, layout.options, layout.rejected, 0)
        return ClusterView(cluster, None, None, layout.options, layout.rejected, room)

    def views(self, clusters: Sequence[Cluster]) -> dict[str, ClusterView]:
        views: dict[str, ClusterView] = {}
        for cluster in clusters:
            try:
                views[cluster.name] = self.view(cluster)
            except DecisionStopped as stop:
                stop.locate(cluster=cluster.name)
                raise
        return views
