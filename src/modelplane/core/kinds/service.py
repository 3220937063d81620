"""Service: a stable address for pods. It has no controller condition: created is serving."""

from collections.abc import Mapping
from typing import Any, Final

from .base import PodSet, PodSite, WorkloadKind, mapping

# What provider-kubernetes calls an object whose readiness is its creation.
CREATED_READINESS: Final = "SuccessfulCreate"


class PodlessKind(WorkloadKind):
    """A kind that runs no pods of its own: traffic objects."""

    def pod_sites(self, spec: dict[str, Any], *, fill: bool) -> list[PodSite]:
        return []

    def pod_sets(self, name: str, spec: dict[str, Any], *, fill: bool) -> list[PodSet]:
        return []


class ObjectKind(PodlessKind):
    """A kind with no controller reporting whether it serves: it does once it exists.

    Readiness is the Object's successful create, and the status reader agrees: an
    observed object serves, one not yet observed does not.
    """

    serving_condition = "Created"

    def readiness(self) -> dict[str, Any]:
        return {"policy": CREATED_READINESS}

    def serving(self, observed: Mapping[str, Any] | None) -> tuple[bool, str]:
        if not observed:
            return False, f"{self.kind} has not been observed yet"
        name = mapping(observed.get("metadata")).get("name", "")
        return True, f"{self.kind} {name}".strip() + f" is {self.serving_condition}"


class Service(ObjectKind):
    kind = "Service"
    api_version = "v1"

    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return {"loadBalancer": {}}


SERVICE: Final = Service()
