"""How far a cache's download got on one cluster, read from what its controller
reports; and what a simulated cluster reports (the render engine's providers).

- A **Job** (Native) is Ready once its `Complete` condition is True (or a pod
  succeeded), Failed once `Failed` is True (its reason, BackoffLimitExceeded or
  DeadlineExceeded, and message are the cache's), Downloading while it exists
  otherwise, and Pending before it is observed.
- A **LocalModelNamespaceCache** (KServe; or the cluster-scoped LocalModelCache an
  earlier Modelplane composed, whose status is the same) is Ready once every node
  of its node groups reports `NodeDownloaded`, Failed when one reports
  `NodeDownloadError`, Downloading while any downloads, and Pending before any
  node reports.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

# A cache's phase on one cluster, as `status.clusters[].phase` spells it.
from modelplane_models.model_cache import Phase
from modelplane_models.shapes import Condition

from modelplane.caching import kserve
from modelplane.caching.native import ENV_URI
from modelplane.core.kinds.base import as_list, mapping
from modelplane.core.observed import conditions
from modelplane.core.vocabulary import LABEL_MODEL_CACHE

JOB_KIND: Final = "Job"
_NODE_DOWNLOADED = "NodeDownloaded"
_NODE_ERROR = "NodeDownloadError"


@dataclass(frozen=True)
class Progress:
    phase: Phase
    message: str
    reason: str = ""
    """Why it failed, as its controller says (the Job's Failed condition's reason)."""


def _condition(job: Mapping[str, Any], kind: str) -> Condition | None:
    """The Job's condition `kind` when it holds (a Job may list one several times)."""
    return next((c for c in conditions(job) if c.type == kind and c.status == "True"), None)


def job_progress(job: Mapping[str, Any] | None) -> Progress:
    if not job:
        return Progress(Phase.PENDING, "the download Job is not created yet")
    name = mapping(job.get("metadata")).get("name", "")
    status = mapping(job.get("status"))
    failed = _condition(job, "Failed")
    if failed is not None:
        reason = failed.reason or "Failed"
        detail = failed.message or "the download failed"
        return Progress(Phase.FAILED, f"Job {name} failed: {reason}: {detail}", reason)
    if _condition(job, "Complete") is not None or int(status.get("succeeded") or 0) > 0:
        return Progress(Phase.READY, f"Job {name} downloaded and checked the weights")
    active = int(status.get("active") or 0)
    if active:
        return Progress(Phase.DOWNLOADING, f"Job {name} is downloading")
    return Progress(Phase.DOWNLOADING, f"Job {name} is starting")


def local_cache_progress(cache: Mapping[str, Any] | None) -> Progress:
    if not cache:
        return Progress(Phase.PENDING, f"the {kserve.KIND} is not created yet")
    name = mapping(cache.get("metadata")).get("name", "")
    kind = cache.get("kind") or kserve.KIND
    nodes = mapping(mapping(cache.get("status")).get("nodeStatus"))
    errors = sorted(node for node, state in nodes.items() if state == _NODE_ERROR)
    if errors:
        return Progress(
            Phase.FAILED,
            f"{kind} {name}: download failed on node {', '.join(errors)}",
            _NODE_ERROR,
        )
    if not nodes:
        return Progress(Phase.PENDING, f"{kind} {name}: no node reports yet")
    done = sum(1 for state in nodes.values() if state == _NODE_DOWNLOADED)
    if done == len(nodes):
        return Progress(Phase.READY, f"{kind} {name}: downloaded on {done} nodes")
    return Progress(Phase.DOWNLOADING, f"{kind} {name}: downloaded on {done} of {len(nodes)} nodes")


def download_progress(manifest: Mapping[str, Any] | None) -> Progress:
    """The progress of whichever download object `manifest` is (as read back)."""
    if manifest and manifest.get("kind") in kserve.KINDS:
        return local_cache_progress(manifest)
    return job_progress(manifest)


def fetched_uri(manifest: Mapping[str, Any]) -> str | None:
    """The URI a download object fetches: a KServe cache's `sourceModelUri`, a Job's
    MODELPLANE_CACHE_URI (`native.ENV_URI`)."""
    spec = mapping(manifest.get("spec"))
    if manifest.get("kind") in kserve.KINDS:
        uri = spec.get("sourceModelUri")
        return uri if isinstance(uri, str) else None
    pod = mapping(mapping(spec.get("template")).get("spec"))
    for container in as_list(pod.get("containers")):
        for var in as_list(mapping(container).get("env")):
            if mapping(var).get("name") == ENV_URI:
                value = mapping(var).get("value")
                return value if isinstance(value, str) else None
    return None


def is_download(manifest: Mapping[str, Any]) -> bool:
    """Whether a manifest is a cache's download object (a simulated cluster takes a
    round to download it)."""
    kind = manifest.get("kind")
    labelled = LABEL_MODEL_CACHE in mapping(mapping(manifest.get("metadata")).get("labels"))
    return labelled and (
        (kind == JOB_KIND and manifest.get("apiVersion") == "batch/v1")
        or (kind in kserve.KINDS and manifest.get("apiVersion") == kserve.API_VERSION)
    )


_SIMULATED_NODE = "gpu-node-0"


def simulated_status(manifest: Mapping[str, Any], *, done: bool) -> dict[str, Any]:
    """The status a download object's controller reports: still downloading, or done."""
    if manifest.get("kind") in kserve.KINDS:
        state = _NODE_DOWNLOADED if done else "NodeDownloading"
        return {
            "copies": {"total": 1, "available": 1 if done else 0, "failed": 0},
            "nodeStatus": {_SIMULATED_NODE: state},
        }
    if not done:
        return {"active": 1, "ready": 0}
    return {
        "succeeded": 1,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached"},
        ],
    }
