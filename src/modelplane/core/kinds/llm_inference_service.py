"""KServe's LLMInferenceService (v1alpha2): a main block and an optional `prefill` block.

Each block is a workload KServe turns into pods: a Deployment, or a
LeaderWorkerSet when the block has a `worker`. The block's `labels` and
`annotations` are what KServe copies onto those pods.
"""

from collections.abc import Mapping
from typing import Any, Final, cast

from modelplane_models.llm_inference_service import LLMInferenceService as LLMInferenceServiceModel

from .base import PodSet, PodSite, WorkloadKind, count, mapping
from .deployment import DEPLOYMENT
from .leader_worker_set import LEADER_WORKER_SET

# Where an LLMInferenceService keeps its disaggregated prefill role.
PREFILL: Final = "prefill"
PREFILL_PATH: Final = f"spec.{PREFILL}"
# KServe names the LeaderWorkerSet of a multi-node block after the service.
LWS_SUFFIX: Final = "-kserve-mn"
PREFILL_LWS_SUFFIX: Final = "-kserve-mn-prefill"


def lws_size(parallelism: object) -> int:
    """The LWS size KServe derives from `parallelism`: data/dataLocal when data
    parallel, else pipeline, else the LWS default of one pod."""
    spec = mapping(parallelism)
    data, local = spec.get("data"), spec.get("dataLocal")
    if count(data, 0) > 0 or count(local, 0) > 0:
        return max(max(count(data, 1), 1) // max(count(local, 1), 1), 1)
    pipeline = count(spec.get("pipeline"), 0)
    return pipeline if pipeline > 0 else 1


class LLMInferenceService(WorkloadKind):
    kind = "LLMInferenceService"
    api_version = "serving.kserve.io/v1alpha2"
    crd = "llminferenceservices.serving.kserve.io"
    model = LLMInferenceServiceModel
    serving_condition = "Ready"
    observes_generation = True

    def pod_sites(self, spec: dict[str, Any], *, fill: bool) -> list[PodSite]:
        sites: list[PodSite] = []
        for path, value in (("spec", spec), (PREFILL_PATH, spec.get(PREFILL))):
            if not isinstance(value, dict):
                continue
            block = cast(dict[str, Any], value)
            specs = tuple(
                (f"{path}.{key}", mapping(block[key]))
                for key in ("template", "worker")
                if isinstance(block.get(key), dict)
            )
            sites.append(PodSite(path=path, metadata=block, specs=specs))
        return sites

    def pod_sets(self, name: str, spec: dict[str, Any], *, fill: bool) -> list[PodSet]:
        return [_block(name, site) for site in self.pod_sites(spec, fill=fill)]

    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}]}


def _block(name: str, site: PodSite) -> PodSet:
    """One block of the service: its main workload, or `spec.prefill`."""
    # For a KServe block the site's metadata is the block itself.
    block = site.metadata
    prefill = site.path == PREFILL_PATH
    multi_node = isinstance(block.get("worker"), dict)
    suffix = PREFILL_LWS_SUFFIX if prefill else LWS_SUFFIX
    # KServe always creates its LeaderWorkerSets with LeaderCreated: never leader_ready.
    return PodSet(
        owner=LEADER_WORKER_SET if multi_node else DEPLOYMENT,
        replicas=count(block.get("replicas"), 1),
        sites=(site,),
        size=lws_size(block.get("parallelism")) if multi_node else 1,
        part=PREFILL if prefill else "",
        lws_name=f"{name}{suffix}" if multi_node else None,
    )


LLM_INFERENCE_SERVICE: Final = LLMInferenceService()
