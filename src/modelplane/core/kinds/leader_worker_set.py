"""LeaderWorkerSet (LWS v0.10): `replicas` groups of `size` pods, a leader and its workers."""

from collections.abc import Mapping
from typing import Any, Final

from modelplane_models.leader_worker_set import LeaderWorkerSet as LeaderWorkerSetModel

from .base import (
    PodSet,
    PodSite,
    WorkloadKind,
    count,
    every_replica_serving,
    mapping,
    template_site,
)

# With this startup policy LWS creates a group's workers only once its leader is
# ready, so a gang of the whole group could never fill.
LEADER_READY: Final = "LeaderReady"
# The StatefulSet pod labels LWS derives cap the name at 51 characters, one fewer
# per ten replicas.
NAME_BASE_MAX: Final = 51


class LeaderWorkerSet(WorkloadKind):
    kind = "LeaderWorkerSet"
    api_version = "leaderworkerset.x-k8s.io/v1"
    crd = "leaderworkersets.leaderworkerset.x-k8s.io"
    model = LeaderWorkerSetModel
    serving_condition = "Available"
    observes_generation = True
    complete_when = ("readyReplicas", "updatedReplicas")
    gangs_pods = True

    def pod_sites(self, spec: dict[str, Any], *, fill: bool) -> list[PodSite]:
        template = mapping(spec.get("leaderWorkerTemplate"))
        path = "spec.leaderWorkerTemplate"
        return template_site(template, "leaderTemplate", path, fill) + template_site(
            template, "workerTemplate", path, fill
        )

    def pod_sets(self, name: str, spec: dict[str, Any], *, fill: bool) -> list[PodSet]:
        return [
            PodSet(
                owner=self,
                replicas=count(spec.get("replicas"), 1),
                sites=tuple(self.pod_sites(spec, fill=fill)),
                size=count(mapping(spec.get("leaderWorkerTemplate")).get("size"), 1),
                lws_name=name,
                leader_ready=spec.get("startupPolicy") == LEADER_READY,
            )
        ]

    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return every_replica_serving(
            spec,
            ("replicas", "readyReplicas", "updatedReplicas"),
            [{"type": "Available", "status": "True", "reason": "AllGroupsReady"}],
        )


def name_max(replicas: int) -> int:
    """The longest LeaderWorkerSet name that still yields valid pod labels."""
    return NAME_BASE_MAX - replicas // 10


LEADER_WORKER_SET: Final = LeaderWorkerSet()
