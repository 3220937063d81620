"""Deployment: `replicas` independent pods from one template."""

from collections.abc import Mapping
from typing import Any, Final

from modelplane_models.deployment import Deployment as DeploymentModel

from .base import PodSet, PodSite, WorkloadKind, count, every_replica_serving, template_site


class Deployment(WorkloadKind):
    kind = "Deployment"
    api_version = "apps/v1"
    model = DeploymentModel
    serving_condition = "Available"
    observes_generation = True
    complete_when = ("availableReplicas", "updatedReplicas")

    def pod_sites(self, spec: dict[str, Any], *, fill: bool) -> list[PodSite]:
        return template_site(spec, "template", "spec", fill)

    def pod_sets(self, name: str, spec: dict[str, Any], *, fill: bool) -> list[PodSet]:
        # Each pod is a whole worker: never a gang, whatever the replica count.
        sites = tuple(self.pod_sites(spec, fill=fill))
        return [PodSet(owner=self, replicas=count(spec.get("replicas"), 1), sites=sites)]

    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return every_replica_serving(
            spec,
            ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas"),
            [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ],
        )


DEPLOYMENT: Final = Deployment()
