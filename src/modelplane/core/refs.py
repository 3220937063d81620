"""A reference to one Kubernetes object, by identity only: on a workload cluster, or a
managed resource on the control plane (as a Usage names it).

What a cluster's replicas need (a CRD, a DeviceClass, a PriorityClass, a queue)
is named this way once, by the registries that know it (the workload kinds, the
in-cluster schedulers, the stack's components), so the InferenceCluster that
observes it, the fleet scheduler that avoids a cluster lacking it and the
replica that reports it name the same object.
"""

from dataclasses import dataclass
from typing import Final

CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
CRD_KIND: Final = "CustomResourceDefinition"
PRIORITY_CLASS_API_VERSION: Final = "scheduling.k8s.io/v1"
PRIORITY_CLASS_KIND: Final = "PriorityClass"
DEVICE_CLASS_KIND: Final = "DeviceClass"
# Crossplane's Usage (namespaced, v2), which orders deletion between managed resources
# it names by ObjectRef: the one place its apiVersion is written.
USAGE_API_VERSION: Final = "protection.crossplane.io/v1beta1"
# Every cluster runs Kubernetes 1.34 or later (the XRD says so): DRA is GA there.
DRA_API_VERSION: Final = "resource.k8s.io/v1"


@dataclass(frozen=True, order=True)
class ObjectRef:
    """An object's apiVersion, kind, name and (for a namespaced kind) namespace."""

    api_version: str
    kind: str
    name: str
    namespace: str = ""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0] if "/" in self.api_version else ""

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """Who the object is, whatever version it is read at."""
        return (self.group, self.kind, self.namespace, self.name)

    def describe(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"

    def manifest(self) -> dict[str, object]:
        """The manifest a provider-kubernetes Object observes it by."""
        metadata: dict[str, str] = {"name": self.name}
        if self.namespace:
            metadata["namespace"] = self.namespace
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": metadata}


def crd(name: str) -> ObjectRef:
    """The CustomResourceDefinition `name` (`<plural>.<group>`)."""
    return ObjectRef(CRD_API_VERSION, CRD_KIND, name)


def priority_class(name: str) -> ObjectRef:
    return ObjectRef(PRIORITY_CLASS_API_VERSION, PRIORITY_CLASS_KIND, name)


def device_class(name: str) -> ObjectRef:
    """The DRA DeviceClass `name`."""
    return ObjectRef(DRA_API_VERSION, DEVICE_CLASS_KIND, name)
