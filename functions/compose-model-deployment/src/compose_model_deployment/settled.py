"""A steady deployment asks only for the clusters its replicas run on.

Most reconciles of a deployment change nothing: every replica it wants runs and
renders the current revision, and serves or is still loading its model. Such a
deployment is *settled*, decided before
anything is fetched from the composite and the observed ModelReplicas alone
(`settled_clusters`). A settled deployment asks for its own replicas' clusters by
name and the replicas on each (so a drain, a shrunk pool, an unreachable cluster,
or another deployment preempting or contending on them is still seen), and lets the
scheduler decide on that narrow fleet, unchanged. Only a decision that keeps every
replica exactly where it is stands (`keeps`); anything else (place, move, hold,
roll, preempt, leave unplaced) widens the requirements to the whole fleet on the
same call, so Crossplane's fetch loop calls again and the decision is made over the
fleet exactly as without this path. Once the wide fleet is carried, the call stays
wide (`carries_wide`): the requirements only grow within one fetch loop, so it
settles (design/requirements.md, "A settled deployment asks for its own clusters").
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from typing import Any, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelDeployment, ModelReplica

from compose_model_deployment.cache import USAGE_KEY
from compose_model_deployment.endpoints import is_endpoint
from compose_model_deployment.fleet import CLUSTERS, REPLICAS, recorded_cluster
from compose_model_deployment.kept import Kept
from compose_model_deployment.statuses import Statuses
from modelplane.core.issues import InvalidInputError
from modelplane.core.vocabulary import ANNOTATION_REVISION, MODEL_REPLICA
from modelplane.scheduling import Decision, Origin
from modelplane.xfn import received
from modelplane.xfn.runner import observed_composite


def settled_clusters(
    req: fnv1.RunFunctionRequest, statuses: Statuses, kept: Kept
) -> frozenset[str] | None:
    """The clusters a settled deployment's replicas run on, or None when it is not
    settled: the spec's replica count differs from the composed replicas (a scale, or
    a move make-before-break), one of them does not record the current revision (a
    rollout) or names no cluster; or the spec cannot be read (the wide path refuses
    it, naming the field). Whether a replica serves does not matter: what the
    scheduler decides of one that does not (kept, or yielding its pool to a replica
    that precedes it) depends on its own cluster alone (design/requirements.md, "A
    replica that does not serve")."""
    try:
        # The composite's model, read once per composite's bytes (`observed_composite`),
        # and what the scheduler reads of it once per model: the decision reads the same.
        wanted = kept.deployment(observed_composite(req, ModelDeployment))
    except InvalidInputError:
        return None
    clusters: set[str] = set()
    replicas = 0
    for key, obj in statuses.observed.items():
        if is_endpoint(obj) or key == USAGE_KEY:
            continue
        metadata = obj.get("metadata")
        annotations = (
            cast(dict[str, Any], metadata).get("annotations")
            if isinstance(metadata, dict)
            else None
        )
        recorded = (
            cast(dict[str, Any], annotations).get(ANNOTATION_REVISION)
            if isinstance(annotations, dict)
            else None
        )
        name = recorded_cluster(obj)
        if obj.get("kind") != MODEL_REPLICA or recorded != wanted.revision or name is None:
            return None
        clusters.add(name)
        replicas += 1
    return frozenset(clusters) if replicas == wanted.replicas else None


def carries_wide(req: fnv1.RunFunctionRequest) -> bool:
    """Whether this call carries the wide fleet: an earlier call of the same fetch
    loop widened, and a fetch loop never narrows again."""
    return received.fetched(req, CLUSTERS) or received.fetched(req, REPLICAS)


def keeps(decision: Decision, replicas: int, composed: dict[str, ModelReplica]) -> bool:
    """Whether the decision keeps every composed replica exactly where it runs, and
    only them: as many as wanted, all retained on their cluster, index and pools,
    none preempting, none removed, and the decision scheduled."""
    if not decision.condition.status or decision.removed or decision.placed != replicas:
        return False
    if {r.name for r in decision.replicas} != set(composed):
        return False
    for replica in decision.replicas:
        spec = composed[replica.name].spec
        if replica.origin is not Origin.RETAINED or replica.preempts or spec is None:
            return False
        if spec.clusterName != replica.cluster or spec.index != replica.index:
            return False
        for role in replica.roles:
            recorded = getattr(spec, role.role, None)
            if recorded is None or getattr(recorded, "nodePoolName", None) != role.pool:
                return False
    return True
