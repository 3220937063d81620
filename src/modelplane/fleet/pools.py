"""The capacity view an InferenceCluster publishes in status.gpuPools.

Each pool joins the nodes the fleet scheduler may place on (`placeable`) with
its class's devices and the taints its nodes carry: the class's, and on a
cluster Modelplane creates the GPU taint too unless the class declares that key
(Modelplane taints those nodes so: `created_node_taints`). When a class
cannot be used (missing, unreadable, invalid) the pool keeps
whatever was published before: the fleet scheduler plans against
status.gpuPools, and an empty entry would look like a pool that lost all its
hardware.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane_models.inference_class import InferenceClass
from modelplane_models.inference_cluster import InferenceCluster, NodePool, PublishedPool

from modelplane.core.issues import Issue
from modelplane.core.node_taints import NodeTaint, created_node_taints
from modelplane.core.vocabulary import Reason
from modelplane.core.written import as_written
from modelplane.fleet.classes import class_issues


@dataclass(frozen=True)
class ClassLookup:
    """A class as the function could see it, once fetched: missing, unreadable, or found."""

    found: InferenceClass | None = None
    unreadable: tuple[Issue, ...] = ()
    """Why the fetched object could not be read into its model."""
    checked: tuple[Issue, ...] | None = None
    """`class_issues(found)`, when the caller already has them (they depend on the
    class alone, so a function keeps them by the class's bytes); None: worked out here."""


@dataclass
class PoolView:
    """The pools to publish, in spec order; an issue per pool whose class cannot be used
    (naming the pool's className field)."""

    pools: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    issues: list[Issue] = field(default_factory=list[Issue])


def placeable(pool: NodePool) -> int:
    """The nodes the fleet scheduler may place on: a pool that can grow counts up to
    maxNodes (its cloud adds nodes as replicas wait), else nodeCount."""
    return pool.nodeCount if pool.maxNodes is None else max(pool.maxNodes, pool.nodeCount)


def publish_pools(
    cluster: InferenceCluster,
    classes: dict[str, ClassLookup],
    previous: Sequence[PublishedPool],
    created: bool = False,
) -> PoolView:
    """status.gpuPools for `cluster`, in spec order, from a lookup of every pool's class;
    `created` for a cluster Modelplane creates (whose GPU nodes it taints).

    Every missing class is reported before every unusable one, so the first
    issue's reason says the worse news.
    """
    before = {pool.name: pool for pool in previous}
    view = PoolView()
    missing: list[Issue] = []
    invalid: list[Issue] = []
    for index, pool in enumerate(cluster.spec.nodePools if cluster.spec else ()):
        path = f"spec.nodePools[{index}].className"
        class_name = pool.className
        lookup = classes[class_name]
        fresh: dict[str, Any] | None = None
        problems = list(lookup.unreadable)
        if lookup.found is not None:
            problems = (
                list(lookup.checked) if lookup.checked is not None else class_issues(lookup.found)
            )
        if lookup.found is None and not problems:
            missing.append(
                Issue(path, f"InferenceClass {class_name!r} not found", Reason.CLASS_NOT_FOUND)
            )
        elif problems:
            why = "; ".join(map(str, problems))
            invalid.append(
                Issue(
                    path, f"InferenceClass {class_name!r} is invalid: {why}", Reason.CLASS_INVALID
                )
            )
        elif lookup.found is not None and lookup.found.spec is not None:
            # class_issues reports a class without a spec, so this is every valid class.
            fresh = {
                "name": pool.name,
                "className": class_name,
                "nodes": placeable(pool),
                "devices": [as_written(device) for device in lookup.found.spec.devices],
            }
            if lookup.found.spec.topology and lookup.found.spec.topology.nvlinkDomainNodes:
                fresh["nvlinkDomainNodes"] = lookup.found.spec.topology.nvlinkDomainNodes
            declared = lookup.found.spec.nodeTaints or []
            if created:
                taints = created_node_taints([NodeTaint.declared(t) for t in declared])
                fresh["nodeTaints"] = [taint.as_dict() for taint in taints]
            elif declared:
                fresh["nodeTaints"] = [as_written(taint) for taint in declared]
        if fresh is None:
            kept = before.get(pool.name)
            if kept is not None and kept.className == class_name:
                # The node count is the platform's own edit and always current.
                fresh = {**as_written(kept), "nodes": placeable(pool)}
        if fresh is not None:
            view.pools.append(fresh)
    view.issues = missing + invalid
    return view
