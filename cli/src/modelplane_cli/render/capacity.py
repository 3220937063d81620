"""Whether the rendered fleet commits more devices than a pool has.

The fleet scheduler never overcommits within one decision, but deployments
decided at the same moment (`--concurrent`) each see the same free capacity.
The workload clusters are the backstop (pods stay Pending for devices that do
not exist), which the simulation does not model, so the render says it plainly.

The check is on totals: every DRA device the ModelReplicas on a pool claim
(workers x nodes per worker x devices per node) against the pool's nodes x DRA
devices per node, as the cluster publishes them in `status.gpuPools`. Totals
can miss an overcommitment that only per-node packing shows, never report one
that is not there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane_models.inference_cluster import PublishedPool
from modelplane_models.shapes import Claim

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.topology import Topology
from modelplane.core.vocabulary import (
    INFERENCE_CLUSTER,
    MODEL_REPLICA,
    ROLE_DECODE,
    ROLE_PREFILL,
    ROLE_WORKERS,
)
from modelplane_cli.render.world import View

_LISTED = 3


def overcommitted(objects: Iterable[View]) -> list[str]:
    """One line per pool whose committed DRA devices exceed what it has."""
    return [line for _, line in sorted(overcommitted_pools(objects).items())]


def overcommitted_pools(objects: Iterable[View]) -> dict[tuple[str, str], str]:
    """Each overcommitted pool, as (cluster, pool), with the line that says so."""
    listed = list(objects)
    capacity: dict[tuple[str, str], int] = {}
    for obj in listed:
        if obj.get("kind") != INFERENCE_CLUSTER:
            continue
        cluster = str((obj.get("metadata") or {}).get("name", ""))
        for pool in _published(obj):
            capacity[(cluster, str(pool.name))] = _devices(pool)
    demand: dict[tuple[str, str], int] = {}
    users: dict[tuple[str, str], list[str]] = {}
    for obj in listed:
        if obj.get("kind") != MODEL_REPLICA:
            continue
        spec: Mapping[str, Any] = obj.get("spec") or {}
        name = str((obj.get("metadata") or {}).get("name", ""))
        for role in (ROLE_WORKERS, ROLE_DECODE, ROLE_PREFILL):
            block = spec.get(role)
            if not isinstance(block, Mapping):
                continue
            key = (str(spec.get("clusterName")), str(block.get("nodePoolName")))  # pyright: ignore[reportUnknownMemberType]
            demand[key] = demand.get(key, 0) + _claimed(block)  # pyright: ignore[reportUnknownArgumentType]
            users.setdefault(key, []).append(name)
    found: dict[tuple[str, str], str] = {}
    for key in sorted(demand):
        if key in capacity and demand[key] > capacity[key]:
            names = sorted(set(users[key]))
            more = f", and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
            found[key] = (
                f"InferenceCluster {key[0]} pool {key[1]} is overcommitted: ModelReplicas "
                f"{', '.join(names[:_LISTED])}{more} claim {demand[key]} devices, it has "
                f"{capacity[key]}"
            )
    return found


def _published(cluster: View) -> list[PublishedPool]:
    """The cluster's `status.gpuPools`, each read through its model; a pool that does
    not read is left out, not its siblings (the cluster's function reports it, not the
    render's summary)."""
    status = cluster.get("status")
    found = status.get("gpuPools") if isinstance(status, Mapping) else None
    pools: list[PublishedPool] = []
    for entry in found if isinstance(found, list) else []:
        try:
            pools.append(parse_object(PublishedPool, entry))
        except InvalidInputError:
            continue
    return pools


def _devices(pool: PublishedPool) -> int:
    per_node = sum(d.count or 0 for d in pool.devices or () if d.claim == Claim.DRA)
    return (pool.nodes or 0) * per_node


def _claimed(block: Mapping[str, Any]) -> int:
    topology: Mapping[str, Any] = block.get("topology") or {}
    nodes = Topology(
        pipeline=_int(topology.get("pipeline", 1)),
        data=_int(topology.get("data", 1)),
        data_local=_int(topology.get("dataLocal", 1)) or 1,
    ).pods(_int(block.get("count", 1)))
    per_node = sum(
        _int(r.get("count", 1)) for r in block.get("deviceRequests") or [] if isinstance(r, Mapping)
    )
    return nodes * per_node


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
