"""How one worker of a role is sharded across GPUs and nodes.

The scheduler sizes placements from it and the renderer shapes pods from it, so
both read the same type, and both build it from the API's `topology` object with
`Topology.from_model`, the one place it is validated.
"""

from dataclasses import dataclass
from typing import Protocol

from modelplane.core.issues import InvalidInputError


class TopologyFields(Protocol):
    """The API's `topology` object, as any generated model holds it."""

    @property
    def tensor(self) -> int | None: ...
    @property
    def pipeline(self) -> int | None: ...
    @property
    def data(self) -> int | None: ...
    @property
    def dataLocal(self) -> int | None: ...  # noqa: N802 (the API's field name)


@dataclass(frozen=True)
class Topology:
    """The parallelism degrees of one worker (`topology` in the API); each is at least 1.

    A worker runs `tensor` GPUs per pipeline stage, `pipeline` stages and `data`
    data-parallel ranks, `data_local` of which share a node.
    """

    tensor: int = 1
    pipeline: int = 1
    data: int = 1
    data_local: int = 1

    @classmethod
    def from_model(cls, model: TopologyFields | None, path: str) -> "Topology":
        """The topology a model holds (absent degrees are 1), checked for what its
        schema states only as a CEL rule: `dataLocal` divides `data`. Raises
        InvalidInputError naming `<path>.dataLocal` otherwise."""
        if model is None:
            return cls()
        topology = cls(
            tensor=model.tensor or 1,
            pipeline=model.pipeline or 1,
            data=model.data or 1,
            data_local=model.dataLocal or 1,
        )
        if topology.data % topology.data_local:
            raise InvalidInputError.at(
                f"{path}.dataLocal",
                f"must divide data ({topology.data}): a node holds a whole number of "
                f"data-parallel ranks, not {topology.data}/{topology.data_local}",
            )
        return topology

    @property
    def nodes_per_worker(self) -> int:
        # from_model rejects a data_local that does not divide data, so this is exact.
        return self.pipeline * self.data // self.data_local

    def pods(self, workers: int) -> int:
        """Pods that `workers` workers of this shape run: one per node each worker spans."""
        return self.nodes_per_worker * workers

    def as_dict(self) -> dict[str, int]:
        """The API's `topology` object, every degree written out."""
        return {
            "tensor": self.tensor,
            "pipeline": self.pipeline,
            "data": self.data,
            "dataLocal": self.data_local,
        }
