"""How a rendered workload's pods gang up, read from the manifest itself.

Everything is read from the manifest (kind, pod templates, LWS size and
replicas, KServe parallelism), so the renderer and the conventions share no
hidden state. Pod templates are found by `modelplane.core.pod_templates`, the
same walker the manifest validator uses.
"""

from dataclasses import dataclass
from typing import Any, Literal, cast

from modelplane.conventions import providers as pv
from modelplane.core.pod_templates import (
    DEPLOYMENT,
    LEADER_WORKER_SET,
    PREFILL_PATH,
    PodSite,
    pod_sites,
    workload_kind,
)
from modelplane.core.vocabulary import LABEL_ROLE

PodOwner = Literal["Deployment", "LeaderWorkerSet"]


@dataclass
class Unit:
    """Pods that one scheduler groups the same way: `replicas` gangs of `size` pods.

    `owner` is the kind the scheduler sees owning the pods, which for an
    LLMInferenceService is what KServe creates from it: a LeaderWorkerSet when it
    has a `worker`, otherwise a Deployment.
    """

    title: str
    part: str
    role: str
    owner: PodOwner
    lws_name: str | None
    size: int
    replicas: int
    leader_ready: bool
    sites: list[PodSite]

    @property
    def multi_pod(self) -> bool:
        return self.owner == LEADER_WORKER_SET and self.size > 1


@dataclass
class Workload:
    manifest: dict[str, Any]
    kind: str
    name: str
    namespace: str | None
    units: list[Unit]

    @property
    def title(self) -> str:
        return f"{self.kind} {self.name}"


def child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]` as a dict, created when absent."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return cast(dict[str, Any], value)


def _dict(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def kserve_lws_size(parallelism: object) -> int:
    """The LWS size KServe derives from `parallelism`: data/dataLocal when data
    parallel, else pipeline, else the LWS default of one pod."""
    spec = _dict(parallelism)
    data, local = spec.get("data"), spec.get("dataLocal")
    if _int(data, 0) > 0 or _int(local, 0) > 0:
        return max(max(_int(data, 1), 1) // max(_int(local, 1), 1), 1)
    pipeline = _int(spec.get("pipeline"), 0)
    return pipeline if pipeline > 0 else 1


def classify(manifest: dict[str, Any]) -> Workload | None:
    """The workload view of a manifest, or None for kinds that carry no pods.

    Its sites share their dicts with `manifest`, so the conventions edit it in place.
    """
    kind = workload_kind(manifest)
    if kind is None:
        return None
    metadata = child(manifest, "metadata")
    name, namespace = metadata.get("name"), metadata.get("namespace")
    role = _dict(metadata.get("labels")).get(LABEL_ROLE)
    workload = Workload(
        manifest=manifest,
        kind=kind,
        name=name if isinstance(name, str) else "",
        namespace=namespace if isinstance(namespace, str) else None,
        units=[],
    )
    role_name = role if isinstance(role, str) else ""
    spec = _dict(manifest.get("spec"))
    sites = pod_sites(manifest, fill=True)
    if kind == DEPLOYMENT:
        workload.units.append(_deployment(workload, spec, role_name, sites))
    elif kind == LEADER_WORKER_SET:
        workload.units.append(_lws(workload, spec, role_name, sites))
    else:
        workload.units.extend(_llmisvc_unit(workload, site, role_name) for site in sites)
    return workload


def _deployment(workload: Workload, spec: dict[str, Any], role: str, sites: list[PodSite]) -> Unit:
    return Unit(
        title=workload.title,
        part="",
        role=role,
        owner=DEPLOYMENT,
        lws_name=None,
        size=1,
        replicas=_int(spec.get("replicas"), 1),
        leader_ready=False,
        sites=sites,
    )


def _lws(workload: Workload, spec: dict[str, Any], role: str, sites: list[PodSite]) -> Unit:
    return Unit(
        title=workload.title,
        part="",
        role=role,
        owner=LEADER_WORKER_SET,
        lws_name=workload.name,
        size=_int(_dict(spec.get("leaderWorkerTemplate")).get("size"), 1),
        replicas=_int(spec.get("replicas"), 1),
        leader_ready=spec.get("startupPolicy") == pv.LWS_LEADER_READY,
        sites=sites,
    )


def _llmisvc_unit(workload: Workload, site: PodSite, role: str) -> Unit:
    """One role of an LLMInferenceService: its main block, or `spec.prefill`."""
    # For a KServe block the site's metadata is the block itself.
    block = site.metadata
    prefill = site.path == PREFILL_PATH
    part = "prefill" if prefill else ""
    suffix = pv.KSERVE_PREFILL_LWS_SUFFIX if prefill else pv.KSERVE_LWS_SUFFIX
    multi_node = isinstance(block.get("worker"), dict)
    return Unit(
        title=f"{workload.title} ({part})" if part else workload.title,
        part=part,
        role="prefill" if prefill else role,
        owner=LEADER_WORKER_SET if multi_node else DEPLOYMENT,
        lws_name=f"{workload.name}{suffix}" if multi_node else None,
        size=kserve_lws_size(block.get("parallelism")) if multi_node else 1,
        replicas=_int(block.get("replicas"), 1),
        # KServe always creates its LeaderWorkerSets with LeaderCreated.
        leader_ready=False,
        sites=[site],
    )
