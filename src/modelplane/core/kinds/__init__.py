"""The registry of workload kinds: what Modelplane renders that runs pods.

One module per kind says everything the rest of Modelplane asks of it (see
`base.WorkloadKind`); `WORKLOAD_KINDS` lists them. Adding a kind is one module
here and its entry below: the renderer builds it, and the scheduler conventions,
the manifest validator, the render simulation and the summary then know its pods,
its gangs, when it serves and how it looks when healthy. The traffic path's kinds
(Service, InferencePool, HTTPRoute, Gateway) run no pods; they say when they are
ready and what the simulation shows of them.
"""

from collections.abc import Mapping
from typing import Any, Final, cast

from .base import PodSet, PodSite, RenderedWorkload, WorkloadKind, mapping
from .deployment import DEPLOYMENT, Deployment
from .gateway import GATEWAY, Gateway
from .http_route import HTTP_ROUTE, HTTPRoute
from .inference_pool import INFERENCE_POOL, InferencePool
from .leader_worker_set import LEADER_WORKER_SET, LeaderWorkerSet
from .llm_inference_service import LLM_INFERENCE_SERVICE, LLMInferenceService
from .service import SERVICE, Service

WORKLOAD_KINDS: Final[tuple[WorkloadKind, ...]] = (
    DEPLOYMENT,
    LEADER_WORKER_SET,
    LLM_INFERENCE_SERVICE,
    # The traffic path: objects that run no pods, serving once created or accepted.
    SERVICE,
    INFERENCE_POOL,
    HTTP_ROUTE,
    GATEWAY,
)


def workload_kind(manifest: Mapping[str, Any]) -> WorkloadKind | None:
    """The registered kind of `manifest` (its kind in the kind's group), or None."""
    return next((k for k in WORKLOAD_KINDS if k.matches(manifest)), None)


def named(kind: str) -> WorkloadKind:
    """The registered kind called `kind`; ValueError for any other."""
    for registered in WORKLOAD_KINDS:
        if registered.kind == kind:
            return registered
    known = ", ".join(sorted(k.kind for k in WORKLOAD_KINDS))
    raise ValueError(f"{kind!r} is not a workload kind ({known})")


def pod_sites(manifest: Mapping[str, Any], *, fill: bool = False) -> list[PodSite]:
    """Every pod template a workload manifest embeds; nothing for any other kind.

    The result shares its dicts with `manifest`, so a caller may inspect or edit
    them in place. A template's `metadata` or `spec` that is absent reads as empty;
    with `fill` it is created in the template, so that edits through the site land.
    """
    kind, spec = workload_kind(manifest), manifest.get("spec")
    if kind is None or not isinstance(spec, dict):
        return []
    return kind.pod_sites(cast(dict[str, Any], spec), fill=fill)


def pod_sets(manifest: Mapping[str, Any], *, fill: bool = False) -> list[PodSet]:
    """How a workload manifest's pods group (sharing its dicts, as `pod_sites`)."""
    kind = workload_kind(manifest)
    if kind is None:
        return []
    name = mapping(manifest.get("metadata")).get("name")
    return kind.pod_sets(
        name if isinstance(name, str) else "", mapping(manifest.get("spec")), fill=fill
    )


def pods(manifest: Mapping[str, Any]) -> int:
    """The pods a workload manifest runs once healthy; 0 for any other kind."""
    return sum(pod_set.pods for pod_set in pod_sets(manifest))


__all__ = [
    "DEPLOYMENT",
    "GATEWAY",
    "HTTP_ROUTE",
    "INFERENCE_POOL",
    "LEADER_WORKER_SET",
    "LLM_INFERENCE_SERVICE",
    "SERVICE",
    "WORKLOAD_KINDS",
    "Deployment",
    "Gateway",
    "HTTPRoute",
    "InferencePool",
    "LLMInferenceService",
    "LeaderWorkerSet",
    "PodSet",
    "PodSite",
    "RenderedWorkload",
    "Service",
    "WorkloadKind",
    "named",
    "pod_sets",
    "pod_sites",
    "pods",
    "workload_kind",
]
