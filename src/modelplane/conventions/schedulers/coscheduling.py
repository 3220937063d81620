"""scheduler-plugins Coscheduling (v0.34): no queues; Modelplane composes every PodGroup."""

from dataclasses import dataclass
from typing import Final

from modelplane.core.charts import Chart, Component
from modelplane.core.kinds import PodSet

from .base import GangObject, Platform, Scheduler

POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
PODGROUP_API: Final = "scheduling.x-k8s.io/v1alpha1"
# scheduler-plugins publishes its chart as a package on each GitHub release.
CHART: Final = Chart(
    "scheduler-plugins",
    url="https://github.com/kubernetes-sigs/scheduler-plugins/releases/download/"
    "v{version}/scheduler-plugins-{version}.tgz",
)


@dataclass(frozen=True)
class Coscheduling(Scheduler):
    name = "Coscheduling"
    # The profile name of the scheduler-plugins "as-a-second-scheduler" chart.
    default_scheduler_name = "scheduler-plugins-scheduler"
    has_queues = False
    reserved_keys = ("scheduling.x-k8s.io/",)
    gang_keys = (POD_GROUP_LABEL,)
    install = Component.helm(
        "schedulerPlugins", "scheduler-plugins (Coscheduling)", "0.34.7", CHART
    )
    gang_crd = "podgroups.scheduling.x-k8s.io"

    def composes_gang(self) -> bool:
        return True

    def gang(self, name: str, pods: PodSet, platform: Platform) -> GangObject:
        return GangObject(
            PODGROUP_API, {"minMember": pods.pods}, pod_labels={POD_GROUP_LABEL: name}
        )

    def split_gang(self) -> str:
        return (
            "the coscheduling plugin's PodGroup has no sub-groups, so each multi-pod "
            "worker is ganged on its own"
        )
