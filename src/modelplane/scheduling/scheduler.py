"""The entry point: one scheduling decision for one ModelDeployment."""

import itertools
from collections.abc import Sequence

from modelplane.cel.budget import CostBudget
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.naming import hashed_name
from modelplane.core.vocabulary import Reason
from modelplane.scheduling.book import CapacityBook, Contention, Yield
from modelplane.scheduling.budget import DecisionStopped
from modelplane.scheduling.cache import CacheView, cold_trace, filter_storage
from modelplane.scheduling.decision import (
    ClusterTrace,
    Decision,
    Event,
    EventType,
    PoolTrace,
    RemovedReplica,
)
from modelplane.scheduling.fleet import ClusterView, FleetFilter, trace_role
from modelplane.scheduling.held_rollout import held_rollout
from modelplane.scheduling.label_selector import (
    MATCH_ALL,
    CompiledLabelSelector,
    compile_label_selector,
)
from modelplane.scheduling.ledger import ChargedLedgers
from modelplane.scheduling.matching import Matcher
from modelplane.scheduling.model import (
    Cluster,
    Deployment,
    ExistingReplica,
    Priorities,
    UnreadableCluster,
)
from modelplane.scheduling.moves import held_moves
from modelplane.scheduling.no_room import CapacityRejection
from modelplane.scheduling.outcome import assemble, held
from modelplane.scheduling.placers import Placers
from modelplane.scheduling.rejections import Rejection
from modelplane.scheduling.retain import Existence, Kept, hold, retain, scale_down
from modelplane.scheduling.rollout import roll
from modelplane.scheduling.selectors import SelectorEngine, SelectorEvaluator
from modelplane.scheduling.spread import shrinker
from modelplane.scheduling.verdict import node_selector_problems, scheduled_condition


def replica_name(deployment: Deployment, cluster: str, index: int) -> str:
    """A replica's object name: the deployment's name and an opaque hash of its identity.

    Stable for a given (namespace, deployment, cluster, index), at most 63
    characters, and it never spells out the cluster or the index.
    """
    return hashed_name(deployment.name, deployment.namespace, deployment.name, cluster, str(index))


def default_engine() -> SelectorEngine:
    from modelplane.scheduling.cel_engine import CelEngine

    return CelEngine()


def _trace(
    views: dict[str, ClusterView],
    capacity: dict[str, CapacityRejection],
    unreadable: Sequence[UnreadableCluster],
    yielded: dict[str, list[PoolTrace]],
) -> tuple[ClusterTrace, ...]:
    entries = [
        ClusterTrace(u.name, Rejection.CLUSTER_UNREADABLE, _unreadable_note(u.problem))
        for u in unreadable
        if u.name is not None and u.name not in views
    ]
    # `views` is in cluster-name order: schedule builds it from the sorted fleet.
    for name, view in views.items():
        full = capacity.get(name)
        rejected = view.rejection or (full.cluster if full else None)
        pools = view.rejected_pools
        extra = (full.pools if full is not None else ()) + tuple(yielded.get(name, ()))
        if extra:
            pools = tuple(sorted(pools + extra, key=PoolTrace.order))
        if rejected is not None:
            entries.append(ClusterTrace(name, rejected.reason, rejected.message, pools))
        elif pools:
            entries.append(ClusterTrace(name, None, None, pools))
    return tuple(sorted(entries, key=lambda entry: entry.cluster))


def _unreadable_note(problem: str) -> str:
    return f"cannot be read ({problem}): its replicas are kept as recorded, nothing new is placed"


def _unreadable_events(unreadable: Sequence[UnreadableCluster]) -> list[Event]:
    return [
        Event(
            EventType.WARNING,
            Reason.CLUSTER_UNREADABLE,
            f"InferenceCluster {u.name or '(name unreadable)'} {_unreadable_note(u.problem)}",
        )
        for u in unreadable
    ]


def _invalid(
    deployment: Deployment,
    own: Sequence[ExistingReplica],
    existence: Existence,
    problems: list[Issue],
    warnings: Sequence[Event],
) -> Decision:
    message = "; ".join(map(str, problems))
    return held(deployment, own, existence, problems[0].reason, message, warnings)


def schedule(
    deployment: Deployment,
    clusters: Sequence[Cluster],
    replicas: Sequence[ExistingReplica],
    *,
    unreadable: Sequence[UnreadableCluster] = (),
    engine: SelectorEngine | None = None,
    priorities: Priorities | None = None,
    budget: CostBudget | None = None,
    cache: CacheView | None = None,
    ledgers: ChargedLedgers | None = None,
) -> Decision:
    """Decide where every replica of `deployment` runs. Pure and deterministic.

    - `clusters`: every InferenceCluster of the fleet (names must be unique), with
      its published `status.gpuPools`; order does not matter.
    - `replicas`: every ModelReplica in the fleet, of this deployment and of every
      other; order does not matter. This deployment's own are those whose `owner`
      is its name in its namespace; the rest are charged to the capacity ledger.
    - `unreadable`: InferenceClusters that exist but cannot be read. Replicas on
      them are held as recorded, nothing new goes there, and each is a trace
      entry and a Warning.
    - `engine`: the device-selector evaluator; defaults to `modelplane.cel`.
    - `priorities`: the fleet's PriorityClasses, or None when they have not been
      fetched (no priority information: nobody yields or is displaced). A
      `spec.priority` naming none of them (when any is known) holds the decision
      (`PriorityNotFound`), as a bad selector does.
    - `cache`: the deployment's model cache (`spec.model.cacheRef`), when it names
      one: where it is Ready, which clusters cannot hold it, or why it cannot be
      used (then the decision holds). See `modelplane.scheduling.cache`.
    - `ledgers`: pool ledgers charged before, kept by their owner (the function
      runner) across decisions; by default a fresh one, kept for this decision only.
    - `budget`: what the decision may spend on CEL; by default `decision_budget()`
      (`modelplane.scheduling.budget`). When it runs out the decision stops and
      holds every existing replica.

    Inputs must be complete: the glue waits until the fleet has been fetched.
    The same inputs give the same Decision, byte for byte. Raises InvalidInputError
    only for duplicate cluster names; everything else wrong with the spec or the
    fleet is reported in the Decision (see `modelplane.scheduling` for the rules).
    """
    ordered = sorted(clusters, key=lambda cluster: cluster.name)
    for before, after in itertools.pairwise(ordered):
        if before.name == after.name:
            raise InvalidInputError(
                [Issue("inferenceclusters", f"duplicate cluster {before.name!r}")]
            )
    unreadable = sorted(unreadable, key=lambda u: (u.name is None, u.name or "", u.problem))
    existence = Existence(
        frozenset(cluster.name for cluster in ordered),
        frozenset(u.name for u in unreadable if u.name is not None),
        nameless=any(u.name is None for u in unreadable),
    )
    warnings = _unreadable_events(unreadable)
    own: list[ExistingReplica] = []
    others: list[ExistingReplica] = []
    for r in replicas:
        mine = r.namespace == deployment.namespace and r.owner == deployment.name
        (own if mine else others).append(r)
    others.sort(key=lambda r: (r.namespace, r.name))
    evaluator = SelectorEvaluator(engine if engine is not None else default_engine(), budget)

    selector: CompiledLabelSelector = MATCH_ALL
    selector_problems: list[Issue] = []
    try:
        selector = compile_label_selector(deployment.cluster_selector)
    except InvalidInputError as error:
        selector_problems = list(error.issues)
    try:
        # The clusterSelector's problems come first, so the first one's reason is the
        # condition's. Compiling the selectors is charged to the budget, so it may stop.
        problems = selector_problems + node_selector_problems(deployment, evaluator)
        if priorities is not None and priorities.unknown(deployment.priority):
            # Placed or updated, its pods would be refused at admission: a serving
            # replica lost. Held as a bad selector is.
            why = (
                f"no PriorityClass {deployment.priority!r} exists (the control plane has: "
                f"{priorities.choices()}): pods naming it are refused"
            )
            problems.append(Issue("spec.priority", why, Reason.PRIORITY_NOT_FOUND))
        if cache is not None and cache.problem is not None:
            problems.append(cache.problem)
        if problems:
            return _invalid(deployment, own, existence, problems, warnings)
        return _decide(
            deployment,
            ordered,
            own,
            others,
            selector,
            evaluator,
            priorities,
            unreadable,
            existence,
            warnings,
            ledgers if ledgers is not None else ChargedLedgers(),
            cache,
        )
    except DecisionStopped as stop:
        reason, why = stop.stop.value, stop.describe()
        return held(deployment, own, existence, reason, why, warnings, stop.trace())


def _decide(
    deployment: Deployment,
    ordered: Sequence[Cluster],
    own: Sequence[ExistingReplica],
    others: Sequence[ExistingReplica],
    selector: CompiledLabelSelector,
    evaluator: SelectorEvaluator,
    priorities: Priorities | None,
    unreadable: Sequence[UnreadableCluster],
    existence: Existence,
    warnings: Sequence[Event],
    charged: ChargedLedgers,
    cache: CacheView | None = None,
) -> Decision:
    """Filter, retain, yield, scale down and fill (the rules in `modelplane.scheduling`)."""
    matcher = Matcher(evaluator)
    fleet = FleetFilter(deployment, selector, matcher)
    views = fleet.views(ordered)
    filter_storage(views, cache)
    selected = eligible = 0
    for view in views.values():
        selected += view.selected
        eligible += view.eligible

    # A cluster whose in-cluster queue is full (often by this deployment's own replicas)
    # is out of capacity, not ruled out by the spec: it keeps the decision from holding.
    any_open = any(view.spread_domain for view in views.values())
    holding = not any_open and bool(own) and deployment.replicas > 0
    removed: list[RemovedReplica]
    if holding:
        # An edit that leaves no cluster open is far likelier a mistake than a
        # wish to tear the deployment down: keep what runs, and say so.
        kept, removed = hold(own, existence)
    else:
        kept, removed = retain(deployment, own, views, fleet, existence)
    contention = None if priorities is None else Contention(deployment, priorities)
    yielded: dict[str, list[PoolTrace]] = {}
    if contention is not None and not holding:
        kept = _yield(
            deployment, views, kept, others, matcher, contention, charged, removed, yielded
        )

    def named(cluster: str, index: int) -> str:
        return replica_name(deployment, cluster, index)

    placers = Placers(
        deployment=deployment,
        views=views,
        own=own,
        others=others,
        removed=removed,
        matcher=matcher,
        contention=contention,
        charged=charged,
        cache=cache,
        named=named,
    )
    if holding:
        kept = scale_down(kept, deployment.replicas, removed)
        moving = held_moves(deployment, own, views, fleet)
        rollout = held_rollout(deployment, kept, {r.name: r.revision for r in own}, moving)
    else:
        shrink = shrinker(deployment, views) if deployment.spread else scale_down
        # A surge beside its outdated replica sees one cluster only; under spread
        # constraints the fleet-wide fill places it, where every domain is counted.
        beside = None if deployment.spread else placers.place_on
        rollout = roll(deployment, kept, removed, placers.place, beside, shrink)
    trace = _trace(views, rollout.capacity, unreadable, yielded)
    hosts = {r.cluster for r in rollout.placed} | {k.replica.cluster for k in rollout.kept}
    cold = cold_trace(views, cache, hosts, {entry.cluster for entry in trace})
    if cold:
        trace = tuple(sorted((*trace, *cold), key=lambda entry: entry.cluster))
    short = len(rollout.kept) + len(rollout.placed) < deployment.replicas
    preempted_by: list[str] = []
    if short and contention is not None and not holding:
        book = CapacityBook(views, rollout.kept, others, matcher, contention, charged)
        preempted_by = book.preempted_on(sorted(rollout.capacity))
    condition, condition_warnings = scheduled_condition(
        deployment,
        views,
        rollout.kept,
        rollout.placed,
        selected=selected,
        eligible=eligible,
        holding=holding,
        unreadable=len(unreadable),
        trace=trace,
        preempted_by=preempted_by,
    )
    warned = [*warnings, *condition_warnings]
    return assemble(rollout, removed, trace, condition, warned, placers.sought)


def _yield(
    deployment: Deployment,
    views: dict[str, ClusterView],
    kept: list[Kept],
    others: Sequence[ExistingReplica],
    matcher: Matcher,
    contention: Contention,
    charged: ChargedLedgers,
    removed: list[RemovedReplica],
    yielded: dict[str, list[PoolTrace]],
) -> list[Kept]:
    """Kept replicas that yield to replicas taking precedence leave (see `precedence`)."""
    book = CapacityBook(views, kept, others, matcher, contention, charged)
    found: list[Yield] = []
    for cluster in sorted({item.replica.cluster for item in kept if item.charges}):
        found.extend(book.yields(cluster))
    if not found:
        return kept
    viewer = deployment.namespace
    for y in found:
        replica = y.kept.replica
        whom = "" if y.to is None else f" to {y.to.describe(viewer)}"
        if y.preempted and y.to is not None:
            by = y.to.describe(viewer)
            removed.append(
                RemovedReplica(
                    replica.name,
                    replica.cluster,
                    replica.index,
                    f"preempted on pool {y.pool} by {by}: {y.why}",
                    preempted_by=by,
                )
            )
            reason = Rejection.PREEMPTED
            message = f"replica {replica.name} was preempted by {by}: {y.why}"
        else:
            removed.append(
                RemovedReplica(
                    replica.name,
                    replica.cluster,
                    replica.index,
                    f"not serving yet, it yielded pool {y.pool}{whom}: {y.why}",
                )
            )
            reason = Rejection.YIELDED
            message = (
                f"replica {replica.name} is not serving yet and yielded its place{whom}: {y.why}"
            )
        role = next((p.role for p in replica.roles if p.pool == y.pool), replica.roles[0].role)
        entry = PoolTrace(y.pool, reason, message, trace_role(role))
        traces = yielded.setdefault(replica.cluster, [])
        same = next((i for i, t in enumerate(traces) if t.order() == entry.order()), None)
        if same is None:
            traces.append(entry)
        else:
            # One entry per pool and role: several replicas yielding there are one cause.
            joined = f"{traces[same].message}; {entry.message}"
            traces[same] = PoolTrace(entry.pool, entry.reason, joined, entry.role)
    gone = {id(y.kept) for y in found}
    return [item for item in kept if id(item) not in gone]
