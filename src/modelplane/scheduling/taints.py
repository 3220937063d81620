"""Cluster taints and deployment tolerations: where new replicas may go, and which must leave.

An InferenceCluster's `spec.taints` work like node taints one level up, and a
ModelDeployment's `spec.tolerations` match them as Kubernetes matches a
toleration to a taint:

- a toleration with operator `Exists` matches any value of its key, and an empty
  key with `Exists` matches every taint; `Equal` (the default) matches the key
  and the value;
- a toleration with no effect matches both effects.

`NoSchedule`: nothing new is placed on the cluster unless the deployment
tolerates the taint (`admits`); replicas already there stay. `NoExecute`: the
same, and replicas already there must move elsewhere (`eviction`).

A cluster that is unreachable (its `Reachable` condition False: its provider
connection or its replicas' Objects have not synced for longer than the grace
period) carries the implicit taint `modelplane.ai/unreachable:NoExecute`, as a
Kubernetes node that stops reporting gets `node.kubernetes.io/unreachable:NoExecute`.
A deployment that tolerates it (an empty-key `Exists` toleration tolerates
everything) stays, as a pod tolerating `unreachable` stays on its node.

Both rules live here, and nowhere else: the filter asks `admits` for every
cluster, and `moves.must_move` asks `eviction` for every replica it keeps.
"""

from typing import Final

from modelplane_models.model_deployment import TolerationOperator
from modelplane_models.shapes import TaintEffect

from modelplane.core.vocabulary import GROUP
from modelplane.scheduling.model import Cluster, Deployment, Taint, Toleration
from modelplane.scheduling.rejections import Rejected, Rejection


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Whether one toleration matches one taint, as Kubernetes matches them."""
    if toleration.effect is not None and toleration.effect is not taint.effect:
        return False
    if not toleration.key:
        return toleration.operator is TolerationOperator.EXISTS
    if toleration.key != taint.key:
        return False
    return toleration.operator is TolerationOperator.EXISTS or toleration.value == taint.value


def describe(taint: Taint) -> str:
    """`key=value:Effect`, as kubectl writes a taint."""
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


UNREACHABLE: Final = Taint(f"{GROUP}/unreachable", TaintEffect.NO_EXECUTE)
"""The taint an unreachable cluster carries implicitly."""


def _untolerated(cluster: Cluster, deployment: Deployment) -> list[Taint]:
    taints = cluster.taints if cluster.reachable else (*cluster.taints, UNREACHABLE)
    return [
        taint
        for taint in taints
        if not any(tolerates(toleration, taint) for toleration in deployment.tolerations)
    ]


def admits(cluster: Cluster, deployment: Deployment) -> Rejected | None:
    """Why the cluster takes no new replica of the deployment (an untolerated taint of
    either effect, or Reachable=False), or None when it may."""
    untolerated = _untolerated(cluster, deployment)
    if not untolerated:
        return None
    if UNREACHABLE in untolerated:
        return Rejected(
            Rejection.CLUSTER_UNREACHABLE, "the cluster is unreachable (Reachable=False)"
        )
    listed = ", ".join(describe(taint) for taint in untolerated)
    return Rejected(Rejection.TAINTED, f"the cluster is tainted {listed}, not tolerated")


def eviction(cluster: Cluster, deployment: Deployment) -> str | None:
    """Why the deployment's replicas already on the cluster must leave it (an
    untolerated NoExecute taint, or Reachable=False), or None when they may stay."""
    leaving = [t for t in _untolerated(cluster, deployment) if t.effect is TaintEffect.NO_EXECUTE]
    if not leaving:
        return None
    if UNREACHABLE in leaving:
        return "its cluster is unreachable (Reachable=False)"
    listed = ", ".join(describe(taint) for taint in leaving)
    return f"its cluster is tainted {listed}, not tolerated"
