"""Whether a workload's pods have a node: a pool its InferenceCluster reports with no
node ready cannot run them, so they stay Pending, as the kube-scheduler leaves a
pod whose nodeSelector no node matches.

The cloud's autoscaler is not simulated: a created cluster's pool at zero nodes
stays there in a preview, and a replica placed on it reports that it waits for
capacity. Raising the pool's nodeCount (or minNodes) shows it serve.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from modelplane.core.vocabulary import INFERENCE_CLUSTER, LABEL_POOL
from modelplane_cli.render.simulate import target_of
from modelplane_cli.render.world import View, World

UNSCHEDULABLE = "Unschedulable"


def _map(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def _pinned_pools(node: object) -> Iterator[str]:
    """Every pool a `nodeSelector` anywhere in a manifest pins pods to."""
    if isinstance(node, Mapping):
        mapping = cast(Mapping[str, Any], node)
        pool = _map(mapping.get("nodeSelector")).get(LABEL_POOL)
        if isinstance(pool, str):
            yield pool
        for value in mapping.values():
            yield from _pinned_pools(value)
    elif isinstance(node, list):
        for item in cast(list[Any], node):
            yield from _pinned_pools(item)


def waiting_for_node(world: World, obj: View) -> str | None:
    """Why an Object's workload cannot run yet: the pools it pins to that its
    cluster reports with no node ready; None when it can run."""
    manifest = _map(_map(obj.get("spec")).get("forProvider")).get("manifest")
    pools = set(_pinned_pools(manifest))
    if not pools:
        return None
    for key in world.named(INFERENCE_CLUSTER, target_of(obj)):
        cluster = world.get(key)
        capacity = _map(_map(cluster.get("status") if cluster else None).get("capacity"))
        empty = sorted(
            str(pool.get("name"))
            for pool in capacity.get("pools") or ()
            if pool.get("name") in pools and pool.get("nodes") == 0
        )
        if empty:
            return f"0 nodes are available: pool {', '.join(empty)} has no node ready"
    return None
