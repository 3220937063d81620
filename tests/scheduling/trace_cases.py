"""The match trace's case table: its shape, and the fleets and devices its cases build."""

from collections.abc import Callable
from dataclasses import dataclass, field

from modelplane.cel import CostBudget
from modelplane.scheduling import CacheView, Rejection

from .builders import Obj, request

Entry = tuple[str, str | None, str | None, Rejection]
"""(cluster, pool, role, reason) of one `status.matchTrace` entry."""


PCIE_ROOT = "resource.kubernetes.io/pcieRoot"


def rooted(device: Obj, root: str) -> Obj:
    """`device` on PCIe root `root`: an entry of its own, as a class lists devices that
    differ in an attribute."""
    return {**device, "attributes": {**device.get("attributes", {}), PCIE_ROOT: {"string": root}}}


def aligned(dep: Obj) -> Obj:
    """`dep` with its requests constrained to one PCIe root."""
    names = [device["name"] for device in dep["spec"]["nodeSelector"]["devices"]]
    dep["spec"]["nodeSelector"]["constraints"] = [{"requests": names, "matchAttribute": PCIE_ROOT}]
    return dep


@dataclass
class Case:
    id: str
    dep: Obj
    clusters: list[Obj]
    entries: list[Entry]
    message: str = ""
    """A fragment the message of the last entry must contain."""
    existing: list[Obj] = field(default_factory=list[Obj])
    budget: Callable[[], CostBudget] | None = None
    """The decision's CEL budget (a fresh one per run), when not the default."""
    cache: CacheView | None = None
    """The deployment's model cache, when it names one."""


ADA_1 = request("gpu", 1, "arch == Ada")


def without_device_class(obj: Obj) -> Obj:
    """The cluster with its first published device's class removed: schema-valid
    field by field, but a DRA device without a class, which the adapter refuses."""
    del obj["status"]["gpuPools"][0]["devices"][0]["deviceClassName"]
    return obj


def lacking(obj: Obj, *missing: Obj) -> Obj:
    """The cluster with `status.stack.missing` as its stack observed it."""
    obj["status"]["stack"] = {"checked": 5, "missing": list(missing)}
    return obj


LWS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "name": "leaderworkersets.leaderworkerset.x-k8s.io",
    "scope": "MultiNode",
}
GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "name": "gpu.nvidia.com",
    "scope": "DeviceClass",
}
