"""The fleet scheduler as a composition function.

Fetch the part of the fleet the deployment can use (the InferenceClusters its
clusterSelector can admit and every ModelReplica on them, because other
deployments' replicas use capacity too: `fleet`), and every PriorityClass, which
decides who keeps capacity several replicas claim; read everything into its
generated model once, let the pure scheduler decide, then compose exactly the
replicas it decided on. Until the fleet has been fetched nothing is decided and
every replica composed before is re-emitted: an unfetched fleet is not an empty
one. A cluster that cannot be read is not gone either: its replicas are held.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelDeployment, ModelReplica, ModelService
from modelplane_models.model_deployment import ReplicaCounts, Status

from compose_model_deployment.cache import (
    USAGE_KEY,
    cache_view,
    compose_usage,
    require_cache,
)
from compose_model_deployment.endpoints import (
    compose_endpoints,
    endpoint_status,
    is_endpoint,
    routed,
)
from compose_model_deployment.fleet import REPLICAS, Fleet, require_fleet, require_own
from compose_model_deployment.kept import Kept
from compose_model_deployment.replicas import (
    compose_replica,
    placements,
    replica_object,
)
from compose_model_deployment.retiring import (
    SERVICES,
    Retirement,
    plan,
    recorded,
    require_services,
    starting,
)
from compose_model_deployment.settled import (
    carried_trace,
    carries_wide,
    keeps,
    settled_clusters,
)
from compose_model_deployment.statuses import (
    Statuses,
    accepted_condition,
    ready_condition,
    unreadable_statuses,
)
from modelplane.cel.environment import warm as warm_cel
from modelplane.core.issues import InvalidInputError, Issue, parse_object
from modelplane.core.refs import PRIORITY_CLASS_API_VERSION, PRIORITY_CLASS_KIND
from modelplane.core.vocabulary import CONTEXT_MATCH_TRACE, LABEL_DEPLOYMENT, ConditionType, Reason
from modelplane.scheduling import (
    CacheView,
    Decision,
    Deployment,
    EventType,
    FleetMemo,
    Origin,
    ReplicaMemo,
    UnreadableCluster,
    existing_replicas,
    read_fleet,
    read_priorities,
    schedule,
)
from modelplane.scheduling.cel_engine import CelEngine
from modelplane.scheduling.ledger import ChargedLedgers
from modelplane.xfn import clock, report, required
from modelplane.xfn.runner import (
    ComposeFunction,
    keep_observed,
    observed_composite,
    observed_resources,
    published,
    set_status,
)

PRIORITY_CLASSES = "priorityclasses"


@dataclass(frozen=True)
class Outcome:
    """One decision and what it was made from."""

    deployment: ModelDeployment
    wanted: Deployment
    composed: dict[str, ModelReplica]
    """The deployment's own composed replicas: not those retiring."""
    decision: Decision
    cache: CacheView | None
    skipped: int
    retiring: dict[str, str]
    """Replicas retiring before this decision, as `retiring.recorded` read them."""
    unreachable: frozenset[str] = frozenset()
    """The clusters whose `Reachable` is False: a replica there is not available."""


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.REPLICAS_SCHEDULED
    published_status = published(ModelDeployment)
    # Readiness follows the replicas that serve (ReplicasReady), not whether the
    # latest edit could be placed: an edit that cannot be placed keeps what runs.
    unready_when_invalid = False

    def __init__(self) -> None:
        super().__init__()
        # The fleet barely changes between calls: clusters and replicas read before
        # are reused.
        self.fleet_memo = FleetMemo()
        self.replica_memo = ReplicaMemo()
        # The CEL devices of the fleet's few device kinds, built once for every decision.
        self.cel_engine = CelEngine()
        # Pool ledgers charged before: clusters stamped from one class charge alike.
        self.charged_ledgers = ChargedLedgers()
        # What this runner read before, by what each value is a function of.
        self.kept = Kept()
        # Lark builds the CEL parser's tables once per process: at start-up, not in
        # the first call that meets a selector.
        warm_cel()

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        # Requirements depend only on the composite, the observed replicas and what
        # was fetched, so Crossplane's fetch loop settles (`fleet`, `settled`).
        observed = observed_resources(req)
        statuses = Statuses(observed, self.kept.statuses)
        composite = observed_composite(req)
        retiring = recorded(composite, observed)
        if retiring:
            require_services(rsp, composite)
        # A retirement under way (a replica unrouted, waiting to go) decides over the fleet.
        wide = bool(retiring) or _traced_raw(req, composite)
        own = None if wide else settled_clusters(req, statuses, self.kept)
        narrow = require_own(req, rsp, own, self.kept) if own is not None else None
        required.require_all(rsp, PRIORITY_CLASSES, PRIORITY_CLASS_API_VERSION, PRIORITY_CLASS_KIND)
        require_cache(rsp, composite)
        if narrow is not None and not carries_wide(req):
            # A settled deployment decides on its own clusters; a decision that keeps
            # every replica where it runs stands, any other widens to the fleet below.
            required.stop_unless_fetched(req, rsp)
            outcome = self.decide(req, narrow, statuses, retiring)
            if keeps(outcome.decision, outcome.composed):
                self.finish(req, rsp, outcome, statuses, narrow=True)
                return
        found = require_fleet(req, rsp, composite, observed, self.kept)
        # What the fleet needs next depends on the lists not fetched yet; an answer
        # to this request is never kept (`required.Unfetched`).
        required.stop_unless_fetched(req, rsp)
        outcome = self.decide(req, found, statuses, retiring)
        self.finish(req, rsp, outcome, statuses, narrow=False)

    def decide(
        self,
        req: fnv1.RunFunctionRequest,
        found: Fleet,
        statuses: Statuses,
        retiring: dict[str, str],
    ) -> Outcome:
        """The scheduler's decision over the fleet `found`, once every requirement is
        fetched (`required.stop_unless_fetched`): the PriorityClasses and the cache too."""
        clusters, fleet_replicas = found.clusters, found.replicas
        deployment = observed_composite(req, ModelDeployment)
        cache = cache_view(req, deployment, clusters.items)

        every = composed_replicas(statuses, self.kept)
        composed = {key: model for key, model in every.items() if key not in retiring}
        wanted = self.kept.deployment(deployment)
        fleet = read_fleet(
            clusters.items,
            [
                UnreadableCluster(u.name if u.named else None, "; ".join(map(str, u.issues)))
                for u in clusters.unreadable
            ],
            found.unreachable,
            self.fleet_memo,
        )
        uid = deployment.metadata.uid if deployment.metadata else None
        running = set(found.serving)
        namespace = wanted.namespace
        running |= {(namespace, key) for key in composed if statuses.serves(key)}
        known = existing_replicas(
            wanted, uid, every, fleet_replicas.items, running, self.replica_memo, set(retiring)
        )
        priorities = read_priorities(required.resolve(req, PRIORITY_CLASSES).items)
        decision = schedule(
            wanted,
            fleet.clusters,
            known.replicas,
            unreadable=fleet.unreadable,
            engine=self.cel_engine,
            priorities=priorities,
            cache=cache,
            ledgers=self.charged_ledgers,
        )
        skipped = known.skipped + len(fleet_replicas.unreadable)
        return Outcome(
            deployment, wanted, composed, decision, cache, skipped, retiring, found.unreachable
        )

    def finish(
        self,
        req: fnv1.RunFunctionRequest,
        rsp: fnv1.RunFunctionResponse,
        outcome: Outcome,
        statuses: Statuses,
        *,
        narrow: bool,
    ) -> None:
        """Compose what the decision wants and report it; on the narrow path the match
        trace (of the whole fleet) is the one the last wide decision published."""
        deployment = outcome.deployment
        carried = (deployment.status or Status()) if narrow else None
        services = None
        if outcome.retiring or starting(outcome.decision, statuses):
            # Asked for once a decision retires a replica too: the same decision on the
            # next call of the fetch loop asks the same, so it settles; until they are
            # fetched the runner answers with the requirements alone.
            require_services(rsp, observed_composite(req))
            services = required.resolve(req, SERVICES, ModelService)
        name = outcome.wanted.name
        retiring = plan(
            outcome.decision, statuses, outcome.retiring, services, name, clock.now(req)
        )
        emit(
            req,
            rsp,
            deployment,
            outcome.wanted,
            outcome.decision,
            statuses,
            self.kept,
            carried,
            retiring,
            outcome.unreachable,
        )
        compose_usage(rsp, deployment, outcome.cache, statuses.observed)
        skipped = outcome.skipped
        if skipped:
            report.warning(
                rsp,
                Reason.REPLICA_UNREADABLE,
                f"{skipped} ModelReplica{'s' if skipped != 1 else ''} of other deployments "
                "cannot be read; the capacity they hold is not charged",
            )


def composed_replicas(statuses: Statuses, kept: Kept) -> dict[str, ModelReplica]:
    """What Crossplane observed this deployment to have composed, by composition
    resource name: this deployment's replicas. InvalidInputError for any it cannot
    read, since nothing can be decided without knowing what runs. A replica's model
    is kept by the data it was read from (shared: callers never change a model)."""
    composed: dict[str, ModelReplica] = {}
    problems: list[Issue] = []
    for key, obj in sorted(statuses.observed.items()):
        if is_endpoint(obj) or key == USAGE_KEY:
            continue
        try:
            composed[key] = kept.replicas.get_or_make(
                statuses.key(key), partial(parse_object, ModelReplica, obj)
            )
        except InvalidInputError as invalid:
            problems.extend(issue.under(f"{REPLICAS}[{key}]") for issue in invalid.issues)
    if problems:
        raise InvalidInputError(problems)
    return composed


def traced(req: fnv1.RunFunctionRequest, read: Deployment) -> bool:
    """Whether the caller asked for this deployment's whole match trace, every entry
    and every cluster of it (`modelplane render --trace`); Crossplane never does."""
    return _traced_named(req, f"{read.namespace}/{read.name}")


def _traced_raw(req: fnv1.RunFunctionRequest, composite: dict[str, Any]) -> bool:
    """`traced`, read from the raw composite before anything is parsed: a traced
    deployment always decides over the whole fleet, since the trace describes it."""
    metadata = composite.get("metadata")
    if not isinstance(metadata, dict):
        return False
    fields = cast(dict[str, Any], metadata)
    return _traced_named(req, f"{fields.get('namespace') or ''}/{fields.get('name') or ''}")


def _traced_named(req: fnv1.RunFunctionRequest, wanted: str) -> bool:
    value = req.context.fields.get(CONTEXT_MATCH_TRACE)
    if value is None or not value.HasField("list_value"):
        return False
    return any(item.string_value == wanted for item in value.list_value.values)


def emit(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    deployment: ModelDeployment,
    read: Deployment,
    decision: Decision,
    statuses: Statuses,
    kept: Kept,
    carried: Status | None = None,
    retirement: Retirement | None = None,
    unreachable: frozenset[str] = frozenset(),
) -> None:
    """Compose the decision's replicas and endpoints and publish its status; with
    `carried`, the match trace is carried forward from it instead of recomputed.
    Replicas `retirement` holds are re-emitted as they run, with no endpoint.

    A replica on an `unreachable` cluster is not available, whatever it last said
    (as Kubernetes marks a lost node's pods not Ready): not ready, not counted in
    ReplicasReady, listed as not serving. Its ModelEndpoint stays only while no
    replica on a reachable cluster serves (`endpoints.routed`)."""
    wanted = read.replicas
    observed = statuses.observed
    last_read = {r.name: statuses.serves(r.name) for r in decision.replicas}
    serving_now = {
        r.name: last_read[r.name] and r.cluster not in unreachable for r in decision.replicas
    }
    for message in unreadable_statuses(statuses, last_read):
        report.warning(rsp, Reason.REPLICA_STATUS_UNREADABLE, message)
    held: set[str] = set()
    for replica in decision.replicas:
        if replica.origin in (Origin.HELD, Origin.PENDING) and replica.name in observed:
            held.add(replica.name)
            continue
        desired = rsp.desired.resources[replica.name]
        compose_replica(desired, replica_object(deployment, replica, read.revision), kept)
        desired.ready = fnv1.READY_TRUE if serving_now[replica.name] else fnv1.READY_FALSE
    # A replica the scheduler holds, or that a rollout has not reached yet, keeps
    # exactly the spec it runs with (so it renders what it ran), and is as ready as
    # any other: ready while it serves.
    keep_observed(req, rsp, held)
    for name in held:
        rsp.desired.resources[name].ready = (
            fnv1.READY_TRUE if serving_now[name] else fnv1.READY_FALSE
        )
    retirement = retirement or Retirement({}, (), {})
    # A retiring replica is leaving: its readiness is not the deployment's.
    keep_observed(req, rsp, set(retirement.held))
    for name in retirement.held:
        rsp.desired.resources[name].ready = fnv1.READY_TRUE

    ready = sum(serving_now.values())
    endpoints = endpoint_status(decision, observed, serving_now, last_read)
    name = (deployment.metadata.name if deployment.metadata else None) or ""
    compose_endpoints(rsp, name, endpoints, observed, kept, routed(serving_now, last_read))
    if carried is not None:
        match_trace, match_omitted = carried_trace(carried), carried.matchTraceOmitted
    else:
        trace = decision.status_trace(complete=traced(req, read))
        match_trace, match_omitted = trace.entries, trace.omitted
    preemptions = decision.preemptions()
    set_status(
        rsp,
        Status(
            replicas=ReplicaCounts(total=decision.placed, ready=ready),
            updatedReplicas=decision.updated,
            selector=f"{LABEL_DEPLOYMENT}={read.name}",
            placements=placements(decision, serving_now),
            matchTrace=match_trace,
            endpoints=endpoints,
            matchTraceOmitted=match_omitted,
            matchTraceSpec=kept.spec_digest(deployment),
            preemptions=preemptions or None,
            retiring=retirement.status(observed),
        ),
    )
    if wanted > 0 and decision.placed == 0:
        # With nothing composed Crossplane would call the deployment Available.
        rsp.desired.composite.ready = fnv1.READY_FALSE

    report.set_condition(rsp, decision.condition)
    report.set_condition(rsp, ready_condition(ready, decision.placed, wanted))
    refusals = {r.name: statuses.refusal(r.name) for r in decision.replicas}
    report.set_condition(rsp, accepted_condition(refusals))
    if decision.progress is not None:
        report.set_condition(rsp, decision.progress)
    for event in decision.events:
        if event.type is EventType.WARNING:
            report.warning(rsp, event.reason, event.message)
        else:
            report.normal(rsp, event.reason, event.message)
    for reason, message in retirement.events():
        report.normal(rsp, reason, message)
