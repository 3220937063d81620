"""How one worker of a role is sharded across GPUs and nodes.

The scheduler sizes placements from it and the renderer shapes pods from it, so
both read the same type. Parsing stays with each caller: each reports a bad
topology in its own error type, against its own object's field paths.
"""

from dataclasses import dataclass


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

    @property
    def nodes_per_worker(self) -> int:
        # Both parsers reject a data_local that does not divide data, so this is exact.
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
