"""The taints an InferenceClass says its nodes carry, and the tolerations they call for.

A class declares its nodes' taints (`spec.nodeTaints`); the pool publishes them
(`status.gpuPools[].nodeTaints`); the fleet scheduler gives a role that claims
devices on the pool exactly those taints as tolerations (`ModelReplica
spec.<role>.tolerations`), and the renderer copies them into the pods. No
device-class name is guessed at: a MIG device class tolerates its nodes' taint
like a full-GPU one, and a class that declares none gives none.

A pool of a cluster Modelplane creates is tainted by Modelplane itself: its nodes
carry the class's taints and, unless the class declares that key, the GPU taint
(`created_node_taints`). Its published taints are those, so its replicas and the
stack's DaemonSets tolerate what its nodes carry.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

# A ModelReplica's toleration operator, as its XRD names it.
from modelplane_models.model_replica import Operator
from modelplane_models.shapes import Effect
from modelplane_models.shapes import NodeTaint as DeclaredTaint


@dataclass(frozen=True, slots=True)
class NodeTaint:
    """One taint of a class's nodes. An empty `value` means the nodes carry the key
    with whatever value their provider sets (EKS `true`, GKE `present`)."""

    key: str
    effect: str
    value: str = ""

    def toleration(self) -> dict[str, str]:
        """The pod toleration that matches this taint and nothing wider: Equal on a
        declared value, Exists on the key when the value is the provider's."""
        if not self.value:
            return {"key": self.key, "operator": Operator.EXISTS.value, "effect": self.effect}
        return {
            "key": self.key,
            "operator": Operator.EQUAL.value,
            "value": self.value,
            "effect": self.effect,
        }

    def as_dict(self) -> dict[str, str]:
        """The taint as a class declares it (`spec.nodeTaints[]`): no value when empty."""
        fields = {"key": self.key, "effect": self.effect}
        if self.value:
            fields["value"] = self.value
        return fields

    @classmethod
    def declared(cls, taint: DeclaredTaint) -> "NodeTaint":
        """A taint as a class or a published pool declares it."""
        return cls(taint.key, str(taint.effect), taint.value or "")

    @classmethod
    def tolerated_by(cls, key: str, operator: str, value: str | None, effect: str) -> "NodeTaint":
        """The taint a recorded toleration (one `toleration()` wrote) stands for."""
        return cls(key, effect, "" if operator == Operator.EXISTS else value or "")


def tolerations(taints: Iterable[NodeTaint]) -> list[dict[str, str]]:
    """The tolerations of `taints`, in their declared order."""
    return [taint.toleration() for taint in taints]


GPU_TAINT_KEY: Final = "nvidia.com/gpu"
GPU_NODE_TAINT: Final = NodeTaint(GPU_TAINT_KEY, Effect.NO_SCHEDULE.value)
"""The GPU taint, as a class would declare it: with no value, since each cloud has its
own (EKS `true`, GKE `present`); tolerated whatever it is."""


def created_node_taints(declared: Sequence[NodeTaint]) -> tuple[NodeTaint, ...]:
    """The taints every node of a GPU pool Modelplane creates carries: its class's, in
    their declared order, then the GPU taint unless the class declares that key (with
    any effect). Without it a GPU node would take any pod: CoreDNS, the stack's
    controllers, a tenant's CPU pods."""
    if any(taint.key == GPU_TAINT_KEY for taint in declared):
        return tuple(declared)
    return (*declared, GPU_NODE_TAINT)
