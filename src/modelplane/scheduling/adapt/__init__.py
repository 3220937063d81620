"""The one adapter from the generated models to the scheduler's inputs.

The glue reads the ModelDeployment, every InferenceCluster and every ModelReplica
into their generated models once, at the edge (`modelplane_models`); this package
builds the scheduler's frozen inputs (`modelplane.scheduling.model`) from those:
`read_deployment`, `read_fleet` (`read_cluster` for one), `existing_replicas` and
`read_priorities` (the PriorityClasses, from plain dicts: they have no model).
The models have checked every type, bound and pattern; each reader checks only
what the schema's CEL rules would have refused and a model cannot see, and
raises `InvalidInputError` naming every such field.

Replica identity comes from Crossplane, not from labels (`existing_replicas`).
"""

from modelplane.scheduling.adapt.deployment import read_deployment, spec_digest
from modelplane.scheduling.adapt.fleet import (
    Fleet,
    FleetMemo,
    Interner,
    read_cluster,
    read_fleet,
    unreachable_clusters,
)
from modelplane.scheduling.adapt.priorities import read_priorities
from modelplane.scheduling.adapt.replicas import (
    KnownReplicas,
    ReplicaMemo,
    composer,
    existing_replicas,
    read_replica,
)

__all__ = [
    "Fleet",
    "FleetMemo",
    "Interner",
    "KnownReplicas",
    "ReplicaMemo",
    "composer",
    "existing_replicas",
    "read_cluster",
    "read_deployment",
    "read_fleet",
    "read_priorities",
    "read_replica",
    "spec_digest",
    "unreachable_clusters",
]
