"""Where the workload kinds Modelplane renders keep their pods.

The renderer writes Deployments, LeaderWorkerSets and LLMInferenceServices; the
scheduler conventions edit their pod templates and the manifest validator checks
them. All of them find the templates through `pod_sites`, so the three agree on
where a kind keeps its pods.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

DEPLOYMENT: Final = "Deployment"
LEADER_WORKER_SET: Final = "LeaderWorkerSet"
LLM_INFERENCE_SERVICE: Final = "LLMInferenceService"
# The API group of each kind; a same-named kind of another group is not ours.
WORKLOAD_GROUPS: Final[Mapping[str, str]] = {
    DEPLOYMENT: "apps",
    LEADER_WORKER_SET: "leaderworkerset.x-k8s.io",
    LLM_INFERENCE_SERVICE: "serving.kserve.io",
}
# Where an LLMInferenceService keeps its disaggregated prefill role.
PREFILL_PATH: Final = "spec.prefill"


@dataclass(frozen=True)
class PodSite:
    """One place a workload keeps pod metadata, and the pod specs created with it.

    `path` is where `metadata` (the labels and annotations the pods get) lives.
    For a Deployment or LeaderWorkerSet template that is the template's
    `metadata`; for an LLMInferenceService it is the spec block (main or
    `prefill`) whose labels and annotations KServe copies onto the pods of its
    `template` and `worker`. `specs` pairs each pod spec with its path; a KServe
    block with neither has none (KServe builds its pods from presets).
    """

    path: str
    metadata: dict[str, Any]
    specs: tuple[tuple[str, dict[str, Any]], ...]


def _mapping(value: object) -> dict[str, Any] | None:
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _slot(parent: dict[str, Any], key: str, fill: bool) -> dict[str, Any]:
    """`parent[key]`; when absent, a new dict, stored in `parent` only with `fill`."""
    value = _mapping(parent.get(key))
    if value is not None:
        return value
    created: dict[str, Any] = {}
    if fill and key not in parent:
        parent[key] = created
    return created


def workload_kind(manifest: Mapping[str, Any]) -> str | None:
    """The kind of a manifest that embeds pod templates, or None for any other."""
    kind, api_version = manifest.get("kind"), manifest.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return None
    group = WORKLOAD_GROUPS.get(kind)
    return kind if group is not None and api_version.partition("/")[0] == group else None


def _template_site(parent: dict[str, Any], key: str, path: str, fill: bool) -> list[PodSite]:
    template = _mapping(parent.get(key))
    if template is None:
        return []
    return [
        PodSite(
            path=f"{path}.{key}.metadata",
            metadata=_slot(template, "metadata", fill),
            specs=((f"{path}.{key}.spec", _slot(template, "spec", fill)),),
        )
    ]


def pod_sites(manifest: Mapping[str, Any], *, fill: bool = False) -> list[PodSite]:
    """Every pod template a Deployment, LeaderWorkerSet or LLMInferenceService embeds.

    Other kinds, and templates a manifest leaves out, yield nothing. The result
    shares its dicts with `manifest`, so a caller may inspect or edit them in
    place. A template's `metadata` or `spec` that is absent reads as empty; with
    `fill` it is created in the template, so that edits through the site land.
    """
    kind = workload_kind(manifest)
    spec = _mapping(manifest.get("spec"))
    if kind is None or spec is None:
        return []
    if kind == DEPLOYMENT:
        return _template_site(spec, "template", "spec", fill)
    if kind == LEADER_WORKER_SET:
        lwt = _mapping(spec.get("leaderWorkerTemplate")) or {}
        path = "spec.leaderWorkerTemplate"
        return _template_site(lwt, "leaderTemplate", path, fill) + _template_site(
            lwt, "workerTemplate", path, fill
        )
    sites: list[PodSite] = []
    for path, block in (("spec", spec), (PREFILL_PATH, _mapping(spec.get("prefill")))):
        if block is None:
            continue
        specs = tuple(
            (f"{path}.{key}", pod_spec)
            for key in ("template", "worker")
            if (pod_spec := _mapping(block.get(key))) is not None
        )
        sites.append(PodSite(path=path, metadata=block, specs=specs))
    return sites
