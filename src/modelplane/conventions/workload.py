"""Where a rendered workload keeps its pod templates, and how its pods gang up.

Everything is read from the manifest itself (kind, template locations, LWS size
and replicas, KServe parallelism), so the renderer and the conventions share no
hidden state.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, cast

from modelplane.conventions import providers as pv
from modelplane.core.vocabulary import LABEL_ROLE

DEPLOYMENT = "Deployment"
LWS = "LeaderWorkerSet"
LLMISVC = "LLMInferenceService"
_GROUPS = {DEPLOYMENT: "apps", LWS: "leaderworkerset.x-k8s.io", LLMISVC: "serving.kserve.io"}

PodOwner = Literal["Deployment", "LeaderWorkerSet"]


@dataclass
class PodSite:
    """One place pod metadata is written, and the pod specs it applies to.

    For a Deployment or LWS template `meta` is the template's `metadata`; for an
    LLMInferenceService it is the spec block whose `labels`/`annotations` KServe
    copies onto the pods of `template` and `worker`.
    """

    path: str
    meta: dict[str, Any]
    specs: list[tuple[str, dict[str, Any]]]


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
        return self.owner == LWS and self.size > 1


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

    def pod_specs(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for unit in self.units:
            for site in unit.sites:
                yield from site.specs


def child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]` as a dict, created when absent."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return cast(dict[str, Any], value)


def _dict(value: object) -> dict[str, Any] | None:
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def kserve_lws_size(parallelism: object) -> int:
    """The LWS size KServe derives from `parallelism`: data/dataLocal when data
    parallel, else pipeline, else the LWS default of one pod."""
    spec = _dict(parallelism) or {}
    data, local = spec.get("data"), spec.get("dataLocal")
    if _int(data, 0) > 0 or _int(local, 0) > 0:
        return max(max(_int(data, 1), 1) // max(_int(local, 1), 1), 1)
    pipeline = _int(spec.get("pipeline"), 0)
    return pipeline if pipeline > 0 else 1


def classify(manifest: dict[str, Any]) -> Workload | None:
    """The workload view of a manifest, or None for kinds that carry no pods."""
    kind = manifest.get("kind")
    api_version = manifest.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return None
    if kind not in _GROUPS or api_version.partition("/")[0] != _GROUPS[kind]:
        return None
    metadata = child(manifest, "metadata")
    name = metadata.get("name")
    namespace = metadata.get("namespace")
    labels = _dict(metadata.get("labels")) or {}
    role = labels.get(LABEL_ROLE)
    workload = Workload(
        manifest=manifest,
        kind=kind,
        name=name if isinstance(name, str) else "",
        namespace=namespace if isinstance(namespace, str) else None,
        units=[],
    )
    role_name = role if isinstance(role, str) else ""
    spec = child(manifest, "spec")
    if kind == DEPLOYMENT:
        workload.units.append(_deployment(workload, spec, role_name))
    elif kind == LWS:
        workload.units.append(_lws(workload, spec, role_name))
    else:
        workload.units.extend(_llmisvc(workload, spec, role_name))
    return workload


def _template_site(parent: dict[str, Any], key: str, path: str) -> PodSite:
    template = child(parent, key)
    return PodSite(
        path=f"{path}.metadata",
        meta=child(template, "metadata"),
        specs=[(f"{path}.spec", child(template, "spec"))],
    )


def _deployment(workload: Workload, spec: dict[str, Any], role: str) -> Unit:
    return Unit(
        title=workload.title,
        part="",
        role=role,
        owner=DEPLOYMENT,
        lws_name=None,
        size=1,
        replicas=_int(spec.get("replicas"), 1),
        leader_ready=False,
        sites=[_template_site(spec, "template", "spec.template")],
    )


def _lws(workload: Workload, spec: dict[str, Any], role: str) -> Unit:
    lwt = child(spec, "leaderWorkerTemplate")
    base = "spec.leaderWorkerTemplate"
    sites: list[PodSite] = []
    if _dict(lwt.get("leaderTemplate")) is not None:
        sites.append(_template_site(lwt, "leaderTemplate", f"{base}.leaderTemplate"))
    sites.append(_template_site(lwt, "workerTemplate", f"{base}.workerTemplate"))
    return Unit(
        title=workload.title,
        part="",
        role=role,
        owner=LWS,
        lws_name=workload.name,
        size=_int(lwt.get("size"), 1),
        replicas=_int(spec.get("replicas"), 1),
        leader_ready=spec.get("startupPolicy") == pv.LWS_LEADER_READY,
        sites=sites,
    )


def _llmisvc(workload: Workload, spec: dict[str, Any], role: str) -> list[Unit]:
    units = [_llmisvc_unit(workload, spec, "spec", "", role, pv.KSERVE_LWS_SUFFIX)]
    prefill = _dict(spec.get("prefill"))
    if prefill is not None:
        units.append(
            _llmisvc_unit(
                workload,
                prefill,
                "spec.prefill",
                "prefill",
                "prefill",
                pv.KSERVE_PREFILL_LWS_SUFFIX,
            )
        )
    return units


def _llmisvc_unit(
    workload: Workload, block: dict[str, Any], path: str, part: str, role: str, suffix: str
) -> Unit:
    specs = [
        (f"{path}.{key}", pod_spec)
        for key in ("template", "worker")
        if (pod_spec := _dict(block.get(key))) is not None
    ]
    multi_node = _dict(block.get("worker")) is not None
    return Unit(
        title=f"{workload.title} ({part})" if part else workload.title,
        part=part,
        role=role,
        owner=LWS if multi_node else DEPLOYMENT,
        lws_name=f"{workload.name}{suffix}" if multi_node else None,
        size=kserve_lws_size(block.get("parallelism")) if multi_node else 1,
        replicas=_int(block.get("replicas"), 1),
        # KServe always creates its LeaderWorkerSets with LeaderCreated.
        leader_ready=False,
        sites=[PodSite(path=path, meta=block, specs=specs)],
    )
