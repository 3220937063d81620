"""How one worker of a role is sharded across GPUs and nodes.

The scheduler sizes placements from it and the renderer shapes pods from it, so
both read the same type, built and validated in one place (`Topology.read`) from
the `topology` object of any API that carries one (the generated `shapes.Topology`).
"""

from dataclasses import dataclass

from modelplane_models.shapes import Topology as TopologyFields

from modelplane.core.issues import InvalidInputError, Issue


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
    def read(cls, fields: TopologyFields | None, path: str) -> "Topology":
        """The topology an API object gives at `path`; InvalidInputError when it is not one.

        The schema bounds each degree; what it leaves to this check is that a node
        holds a whole number of data-parallel ranks.
        """
        if fields is None:
            return cls()
        topology = cls(
            tensor=_degree(fields.tensor),
            pipeline=_degree(fields.pipeline),
            data=_degree(fields.data),
            data_local=_degree(fields.dataLocal),
        )
        problems = [
            Issue(f"{path}.{name}", f"must be at least 1, not {value}")
            for name, value in topology.as_dict().items()
            if value < 1
        ]
        if not problems and topology.data % topology.data_local:
            # A remainder would leave the node count (pipeline * data / dataLocal) fractional.
            problems.append(
                Issue(
                    f"{path}.dataLocal",
                    f"must divide data ({topology.data}), not {topology.data_local}",
                )
            )
        if problems:
            raise InvalidInputError(problems)
        return topology

    @property
    def nodes_per_worker(self) -> int:
        # `read` rejects a data_local that does not divide data, so this is exact.
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


class RoleSize:
    """A role's `workers` workers of one `topology`: what a deployment's role asks for
    (`scheduling.Role`) and a placed role records (`core.placement.PlacedRole`)."""

    workers: int
    topology: Topology

    @property
    def pods(self) -> int:
        """Pods of this role in one replica: one per node each worker spans; each
        asks its node for the role's requests (or holds its share of them)."""
        return self.topology.pods(self.workers)


def _degree(value: int | None) -> int:
    return 1 if value is None else value
