"""The taints of a node pool Modelplane creates, as its cloud's managed resource takes them.

A pool's nodes carry its class's `nodeTaints` and, unless the class declares that
key, the GPU taint (`core.node_taints.created_node_taints`). The pool sets them
itself rather than leaving the GPU taint to the cloud: GKE taints GPU nodes only
when the cluster already runs a non-GPU pool, and a created cluster's GPU pools
may be created before its system pool.

Both upjet kinds (EKS `NodeGroup.taint[]`, GKE `NodePool.nodeConfig.taint[]`) take
`{key, value, effect}` with the effect in the clouds' API spelling. A taint
declared without a value (the toleration then matches any) gets the value the
cloud gives its own GPU taint: the GCP provider requires a value. They are sorted,
so a class that lists the same taints in another order changes nothing.

Changing them updates the pool in place on both clouds (neither Terraform schema
makes `taint` force a replacement; the providers call the cloud's node pool or node
group update): a class's edited taints reach its nodes without replacing them.
"""

from collections.abc import Iterable
from typing import Final

from modelplane_models.shapes import Effect

from modelplane.core.node_taints import NodeTaint

# The effect names both upjet CRDs (and the EKS and GKE APIs) take.
CLOUD_EFFECTS: Final = {
    Effect.NO_SCHEDULE.value: "NO_SCHEDULE",
    Effect.PREFER_NO_SCHEDULE.value: "PREFER_NO_SCHEDULE",
    Effect.NO_EXECUTE.value: "NO_EXECUTE",
}


def cloud_taints(taints: Iterable[NodeTaint], unset_value: str) -> list[dict[str, str]]:
    """`taints` as the cloud's node pool takes them, sorted by key, effect and value; a
    taint without a value gets `unset_value`, the value of the cloud's GPU taint."""
    out = [
        {
            "key": taint.key,
            "value": taint.value or unset_value,
            "effect": CLOUD_EFFECTS[taint.effect],
        }
        for taint in taints
    ]
    return sorted(out, key=lambda taint: (taint["key"], taint["effect"], taint["value"]))
