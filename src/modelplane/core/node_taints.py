"""The taints an InferenceClass says its nodes carry, and the tolerations they call for.

A class declares its nodes' taints (`spec.nodeTaints`); the pool publishes them
(`status.gpuPools[].nodeTaints`); the fleet scheduler gives a role that claims
devices on the pool exactly those taints as tolerations (`ModelReplica
spec.<role>.tolerations`), and the renderer copies them into the pods. No
device-class name is guessed at: a MIG device class tolerates its nodes' taint
like a full-GPU one, and a class that declares none gives none.
"""

from collections.abc import Iterable
from dataclasses import dataclass

# A ModelReplica's toleration operator, as its XRD names it.
from modelplane_models.model_replica import Operator


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

    @classmethod
    def tolerated_by(cls, key: str, operator: str, value: str | None, effect: str) -> "NodeTaint":
        """The taint a recorded toleration (one `toleration()` wrote) stands for."""
        return cls(key, effect, "" if operator == Operator.EXISTS else value or "")


def tolerations(taints: Iterable[NodeTaint]) -> list[dict[str, str]]:
    """The tolerations of `taints`, in their declared order."""
    return [taint.toleration() for taint in taints]
