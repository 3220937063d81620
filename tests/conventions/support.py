"""Read test inputs the way the glue and the renderer hand them over: a `spec.scheduling`
block into its generated model, manifests into typed rendered workloads."""

from collections.abc import Iterable
from typing import Any

from modelplane_models.inference_cluster import Scheduling

from modelplane.conventions import ConventionResult, SchedulingConfig, parse_scheduling
from modelplane.core.issues import Issue
from modelplane.core.kinds import RenderedWorkload, workload_kind
from modelplane.core.vocabulary import LABEL_ROLE


def read_scheduling(block: dict[str, Any] | None) -> tuple[SchedulingConfig, list[Issue]]:
    return parse_scheduling(None if block is None else Scheduling.model_validate(block))


def typed(manifests: Iterable[dict[str, Any]]) -> list[RenderedWorkload]:
    """Workload manifests as the renderer hands them over, keyed by position."""
    out: list[RenderedWorkload] = []
    for i, manifest in enumerate(manifests):
        kind = workload_kind(manifest)
        assert kind is not None, manifest
        labels = manifest["metadata"].get("labels")
        role = labels.get(LABEL_ROLE, "") if isinstance(labels, dict) else ""
        out.append(RenderedWorkload(f"workload-{i}-{role}", str(role), kind, manifest))
    return out


def handed(result: ConventionResult) -> list[dict[str, Any]]:
    """The manifests the conventions handed back, in order."""
    return [workload.manifest for workload in result.workloads]
