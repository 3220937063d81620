"""Which fetched InferenceClusters say they are unreachable, read from their models.

Every call carries the whole fleet, each cluster read into its generated model once
per object's bytes (`required.resolve`); the `Reachable` condition is read from the
model's status. It answers exactly what `modelplane.scheduling.unreachable_clusters`
answers for the same objects as plain data: a named cluster whose first `Reachable`
condition has status "False".
"""

from modelplane_models import InferenceCluster

from modelplane.core.observed import first_condition
from modelplane.core.vocabulary import ConditionType
from modelplane.xfn.required import Required


def _unreachable_name(cluster: InferenceCluster) -> str | None:
    found = first_condition(
        cluster.status.conditions if cluster.status else None, ConditionType.REACHABLE
    )
    if found is None or found.status != "False":
        return None
    return cluster.metadata.name if cluster.metadata else None


def unreachable_cluster_names(clusters: Required[InferenceCluster]) -> frozenset[str]:
    """Names of the clusters whose `Reachable` condition is False; unknown is reachable."""
    return frozenset(
        name for cluster in clusters.items if (name := _unreachable_name(cluster)) is not None
    )
