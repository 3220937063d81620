"""A steady deployment asks only for the clusters its replicas run on.

Most reconciles of a deployment change nothing: every replica it wants runs, serving
or still loading its model, or a rollout waits for its updated replicas to serve.
Such a deployment is *settled*, decided before anything is fetched from the
composite and the observed ModelReplicas alone (`settled_clusters`). A settled
deployment asks for its own replicas' clusters by name and the replicas on each (so
a drain, a shrunk pool, an unreachable cluster, or another deployment preempting or
contending on them is still seen), and lets the scheduler decide on that narrow
fleet, unchanged. Only a decision that keeps every replica where it runs and looks
for no room stands (`keeps`); anything else (place, surge, move, retire, hold,
preempt, leave unplaced) widens the requirements to the whole fleet on the same
call, so Crossplane's fetch loop calls again and the decision is made over the
fleet exactly as without this path. Once the wide fleet is carried, the call stays
wide (`carries_wide`): the requirements only grow within one fetch loop, so it
settles (design/requirements.md, "A settled deployment asks for its own clusters").
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelDeployment, ModelReplica
from modelplane_models.model_deployment import MatchTraceEntry, Status

from compose_model_deployment.cache import USAGE_KEY
from compose_model_deployment.endpoints import is_endpoint
from compose_model_deployment.fleet import CLUSTERS, REPLICAS, recorded_cluster
from compose_model_deployment.kept import Kept
from compose_model_deployment.statuses import Statuses
from modelplane.core.issues import InvalidInputError
from modelplane.core.vocabulary import MODEL_REPLICA
from modelplane.scheduling import Decision, Origin, Rejection
from modelplane.xfn import received
from modelplane.xfn.runner import observed_composite


def settled_clusters(
    req: fnv1.RunFunctionRequest, statuses: Statuses, kept: Kept
) -> frozenset[str] | None:
    """The clusters a settled deployment's replicas run on, or None when it is not
    settled: the spec is not the one the last decision over the fleet was made for
    (`status.matchTraceSpec`, so that an edit gets a trace of its own); fewer
    replicas are composed than the spec wants (a scale up, or a replica lost: the
    decision places, which needs the fleet), or one of them names no cluster; or the
    spec cannot be read (the wide path refuses it, naming the field).
    Neither serving nor the revision a replica records decides it: a replica loading
    its model or failing, and a rollout waiting for updated replicas to serve, are
    decided on their own clusters, and `keeps` widens whatever needs more
    (design/requirements.md, "A replica that does not serve", "A rollout that waits")."""
    try:
        # The composite's model, read once per composite's bytes (`observed_composite`),
        # and what the scheduler reads of it once per model: the decision reads the same.
        model = observed_composite(req, ModelDeployment)
        wanted = kept.deployment(model)
    except InvalidInputError:
        return None
    if model.status is None or model.status.matchTraceSpec != kept.spec_digest(model):
        # The spec was edited since the last decision over the fleet, whose trace the
        # status still shows: decide over the fleet once for the spec as it is now.
        return None
    clusters: set[str] = set()
    replicas = 0
    for key, obj in statuses.observed.items():
        if is_endpoint(obj) or key == USAGE_KEY:
            continue
        name = recorded_cluster(obj)
        if obj.get("kind") != MODEL_REPLICA or name is None:
            return None
        clusters.add(name)
        replicas += 1
    return frozenset(clusters) if replicas >= wanted.replicas else None


def carries_wide(req: fnv1.RunFunctionRequest) -> bool:
    """Whether this call carries the wide fleet: an earlier call of the same fetch
    loop widened, and a fetch loop never narrows again."""
    return received.fetched(req, CLUSTERS) or received.fetched(req, REPLICAS)


def keeps(decision: Decision, composed: dict[str, ModelReplica]) -> bool:
    """Whether the decision keeps every composed replica where it runs, and only them,
    without looking for room anywhere: none placed, removed, held or preempting, each
    retained (or, while a rollout reaches it, kept as it runs) on the cluster, index
    and pools it records, and the decision scheduled. Such a decision depends on the
    clusters the replicas run on alone; any other widens."""
    if not decision.condition.status or decision.removed or decision.sought_room:
        return False
    if {r.name for r in decision.replicas} != set(composed):
        return False
    for replica in decision.replicas:
        spec = composed[replica.name].spec
        if replica.origin not in _KEPT or replica.preempts or spec is None:
            return False
        if spec.clusterName != replica.cluster or spec.index != replica.index:
            return False
        for role in replica.roles:
            recorded = getattr(spec, role.role, None)
            if recorded is None or getattr(recorded, "nodePoolName", None) != role.pool:
                return False
    return True


_KEPT = frozenset({Origin.RETAINED, Origin.PENDING})
"""A replica kept where it runs: re-derived from the spec, or as it runs while a
rollout reaches it."""


_GAVE_UP = frozenset({Rejection.YIELDED.value, Rejection.PREEMPTED.value})
"""Trace reasons that record a replica of this deployment giving up its place."""


def carried_trace(status: Status) -> list[MatchTraceEntry] | None:
    """The match trace a decision that `keeps` publishes: the last wide decision's,
    less its entries saying a replica of this deployment gave up its place (`Yielded`,
    `Preempted`). Giving it up was that decision's own act, and one that keeps removed
    nothing: left in, they would stand on a deployment whose replacement serves until
    the next decision over the fleet. The count of what the cap left out is that
    decision's, unchanged."""
    if status.matchTrace is None:
        return None
    return [entry for entry in status.matchTrace if entry.reason not in _GAVE_UP]
