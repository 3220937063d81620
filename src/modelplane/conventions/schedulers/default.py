"""The default kube-scheduler: no queues, no gangs, no name of its own."""

from dataclasses import dataclass

from .base import Scheduler


@dataclass(frozen=True)
class Default(Scheduler):
    name = "Default"
    has_queues = False
    no_gangs = "the default scheduler has no gang scheduling; multi-pod workers start pod by pod"

    def split_gang(self) -> str:
        return (
            "the default scheduler gangs nothing unless gang.api is Workload on a "
            "Kubernetes version that serves it"
        )
