"""The checks every cloud shares: each pool's size and its class's provisioning block.

A pool's bounds default to its nodeCount (a fixed-size pool); `minNodes` and
`maxNodes` open it to the cloud's autoscaler. A pool whose class cannot be built
from is reported naming the field and left out of the plan: the function keeps
whatever it composed for it before, so bad input never deletes a node group.
"""

from dataclasses import dataclass, field

from modelplane_models.inference_class import InferenceClass
from modelplane_models.inference_cluster import NodePool

from modelplane.core.devices import claimed_through_dra
from modelplane.core.issues import Issue
from modelplane.core.node_taints import NodeTaint
from modelplane.core.vocabulary import NVIDIA_GPU_DRIVER, Reason

from .model import SYSTEM_POOL, PoolPlan


@dataclass
class PoolCheck:
    """The pools that can be built, those to keep as they are, and why."""

    plans: list[PoolPlan] = field(default_factory=list[PoolPlan])
    kept: list[str] = field(default_factory=list[str])
    issues: list[Issue] = field(default_factory=list[Issue])


def bounds(pool: NodePool) -> tuple[int, int]:
    """(minNodes, maxNodes), each defaulting to nodeCount."""
    low = pool.nodeCount if pool.minNodes is None else pool.minNodes
    high = pool.nodeCount if pool.maxNodes is None else pool.maxNodes
    return low, high


def size_issues(path: str, pool: NodePool) -> list[Issue]:
    """What is wrong with a created pool's size, on any cloud."""
    low, high = bounds(pool)
    if high < low:
        return [Issue(f"{path}.maxNodes", f"must be at least minNodes ({low}), not {high}")]
    if high < 1:
        # Neither cloud makes a pool that may have no node: an EKS node group's maxSize
        # is at least 1, and GKE refuses a total (or per-zone) maximum of zero. Composed,
        # such a pool is never created, or a running one never shrunk, while its managed
        # resource says only "not synced".
        return [Issue(f"{path}.maxNodes", "must be at least 1: the cloud makes no pool of none")]
    if not low <= pool.nodeCount <= high:
        return [
            Issue(
                f"{path}.nodeCount",
                f"must be between minNodes and maxNodes ({low}..{high}), not {pool.nodeCount}",
            )
        ]
    return []


def claims_nvidia_gpus(found: InferenceClass) -> bool:
    """Whether a class declares DRA devices of NVIDIA's GPU driver (a Synthetic device is
    never claimed, so it asks nothing of the driver)."""
    devices = found.spec.devices if found.spec else []
    return any(
        claimed_through_dra(device.claim) and device.driver == NVIDIA_GPU_DRIVER
        for device in devices
    )


def claims_dra_devices(found: InferenceClass) -> bool:
    """Whether a class declares any device claimed through DRA (not Synthetic)."""
    devices = found.spec.devices if found.spec else []
    return any(claimed_through_dra(device.claim) for device in devices)


def declared_taints(found: InferenceClass) -> tuple[NodeTaint, ...]:
    """The class's `nodeTaints`, in their declared order."""
    taints = found.spec.nodeTaints if found.spec else None
    return tuple(NodeTaint.declared(taint) for taint in taints or ())


def check_pools(
    source: str,
    pools: list[NodePool],
    classes: dict[str, InferenceClass | None],
) -> PoolCheck:
    """Join each pool with its class's provisioning block for `source` (EKS, GKE).

    A class not found yet (None) is neither planned nor reported here: PoolsResolved
    says the class is missing or awaited.
    """
    out = PoolCheck()
    block = source.lower()
    for index, pool in enumerate(pools):
        path = f"spec.nodePools[{index}]"
        problems = size_issues(path, pool)
        if pool.name == SYSTEM_POOL:
            # The cloud's own untainted group has this pool's key and name: taking it
            # would replace the nodes CoreDNS and the controllers run on.
            problems.append(
                Issue(
                    f"{path}.name",
                    f"{SYSTEM_POOL!r} is reserved for the cluster's own system node group; "
                    "name the pool otherwise",
                )
            )
        found = classes.get(pool.className)
        provisioning = found.spec.provisioning if found is not None and found.spec else None
        if found is None:
            out.kept.append(pool.name)
            out.issues.extend(problems)
            continue
        if provisioning is None:
            problems.append(
                Issue(
                    f"{path}.className",
                    f"InferenceClass {pool.className!r} has no spec.provisioning; "
                    f"a pool of a cluster Modelplane creates needs spec.provisioning.{block}",
                    Reason.CLASS_NOT_PROVISIONABLE,
                )
            )
        elif str(provisioning.provider) != source or getattr(provisioning, block) is None:
            problems.append(
                Issue(
                    f"{path}.className",
                    f"InferenceClass {pool.className!r} has no spec.provisioning.{block} "
                    f"(its provider is {provisioning.provider}); this cluster's source is {source}",
                    Reason.CLASS_NOT_PROVISIONABLE,
                )
            )
        if problems or provisioning is None:
            out.kept.append(pool.name)
            out.issues.extend(problems)
            continue
        low, high = bounds(pool)
        out.plans.append(
            PoolPlan(
                pool.name,
                pool.className,
                pool.nodeCount,
                low,
                high,
                provisioning,
                nvidia_dra=claims_nvidia_gpus(found),
                dra=claims_dra_devices(found),
                class_taints=declared_taints(found),
            )
        )
    return out
