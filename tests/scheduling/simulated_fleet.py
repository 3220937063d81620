"""A fleet the property tests run rounds over: the replicas placed on it, and the
in-cluster scheduler that decides which of them run."""

from dataclasses import dataclass
from typing import Protocol

from .builders import Obj

HOPPER = "arch == Hopper"


@dataclass
class Placed:
    deployment: str
    cluster: str
    index: int
    gpus: int
    serving: bool = False
    round: int = 0


class Fleet(Protocol):
    """Clusters of one pool of 8-GPU nodes, and what is placed on them by name."""

    clusters: dict[str, Obj]
    placed: dict[str, Placed]

    def nodes(self, name: str) -> int: ...


def fits(gpus: list[int], nodes: int) -> bool:
    """First-fit decreasing of pods on 8-GPU nodes; exact for sizes 4 and 8."""
    free = [8] * nodes
    for size in sorted(gpus, reverse=True):
        slot = next((i for i, f in enumerate(free) if f >= size), None)
        if slot is None:
            return False
        free[slot] -= size
    return True


def kube(fleet: Fleet) -> None:
    """The in-cluster scheduler: on each pool, what serves keeps running, and the others
    start, oldest first, while they fit; one that does not fit stays Pending."""
    for name in fleet.clusters:
        here = sorted(
            ((n, p) for n, p in fleet.placed.items() if p.cluster == name),
            key=lambda item: (not item[1].serving, item[1].round, item[0]),
        )
        running: list[int] = []
        for _, p in here:
            if fits([*running, p.gpus], fleet.nodes(name)):
                running.append(p.gpus)
                p.serving = True
