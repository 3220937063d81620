"""The capacity view an InferenceCluster publishes in status.gpuPools.

Each pool joins the cluster's node count with its class's devices. When a class
cannot be read (not fetched yet, missing, invalid) the pool keeps whatever was
published before: the fleet scheduler plans against status.gpuPools, and an
empty entry would look like a pool that lost all its hardware.
"""

from dataclasses import dataclass, field
from typing import Any

from modelplane.fleet.classes import class_problems


@dataclass(frozen=True)
class ClassLookup:
    """A class as the function could see it: fetched or not, and if so, its object."""

    fetched: bool
    obj: dict[str, Any] | None = None


@dataclass
class PoolView:
    pools: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    missing: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    invalid: list[tuple[str, str, str]] = field(default_factory=list[tuple[str, str, str]])
    waiting: list[str] = field(default_factory=list[str])


def publish_pools(
    cluster: dict[str, Any],
    classes: dict[str, ClassLookup],
    previous: list[dict[str, Any]],
) -> PoolView:
    """status.gpuPools for `cluster`, in spec order.

    `missing` and `invalid` name the field path of each pool whose class is absent
    or unusable; `waiting` lists classes not fetched yet.
    """
    before = {pool.get("name"): pool for pool in previous}
    view = PoolView()
    for index, pool in enumerate(cluster.get("spec", {}).get("nodePools", [])):
        path = f"spec.nodePools[{index}].className"
        class_name = pool["className"]
        lookup = classes.get(class_name, ClassLookup(fetched=False))
        fresh: dict[str, Any] | None = None
        if not lookup.fetched:
            view.waiting.append(class_name)
        elif lookup.obj is None:
            view.missing.append((path, class_name))
        else:
            problems = class_problems(lookup.obj)
            if problems:
                view.invalid.append((path, class_name, "; ".join(map(str, problems))))
            else:
                fresh = {
                    "name": pool["name"],
                    "className": class_name,
                    "nodes": pool["nodeCount"],
                    "devices": lookup.obj["spec"]["devices"],
                }
        if fresh is None:
            kept = before.get(pool["name"])
            if kept is not None and kept.get("className") == class_name:
                # The node count is the platform's own edit and always current.
                fresh = {**kept, "nodes": pool["nodeCount"]}
        if fresh is not None:
            view.pools.append(fresh)
    return view
