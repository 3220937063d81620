"""The registry of in-cluster schedulers Modelplane hands pods to.

Each scheduler is one module here, a `Scheduler` subclass (see `base`) holding
its settings and everything it does differently from the default scheduler;
`SCHEDULERS` lists them by `spec.scheduling.provider`. Adding a scheduler is one
module and its entry below (and the provider's name, with any settings
sub-block, in the InferenceCluster XRD): the conventions, the block's validation
and the renderer's name limits then follow it.
"""

from collections.abc import Mapping
from typing import Final

from .base import ROOT, GangObject, Keys, Platform, ReplicaPods, Scheduler
from .coscheduling import Coscheduling
from .default import Default
from .kai import KAI
from .kueue import Kueue
from .volcano import Volcano

SCHEDULERS: Final[Mapping[str, type[Scheduler]]] = {
    scheduler.name: scheduler for scheduler in (Default, KAI, Kueue, Volcano, Coscheduling)
}


def strictest_lws_name_max() -> int | None:
    """The shortest LeaderWorkerSet name limit any scheduler sets, if any does.

    The renderer names LeaderWorkerSets within it, so that every scheduler's
    conventions stay open to a replica wherever it lands.
    """
    limits = [s.lws_name_max for s in SCHEDULERS.values() if s.lws_name_max is not None]
    return min(limits) if limits else None


__all__ = [
    "KAI",
    "ROOT",
    "SCHEDULERS",
    "Coscheduling",
    "Default",
    "GangObject",
    "Keys",
    "Kueue",
    "Platform",
    "ReplicaPods",
    "Scheduler",
    "Volcano",
    "strictest_lws_name_max",
]
