"""Read a test `spec.scheduling` block the way the glue does: into its generated model."""

from typing import Any

from modelplane_models.inference_cluster import Scheduling

from modelplane.conventions import SchedulingConfig, parse_scheduling
from modelplane.core.issues import Issue


def read_scheduling(block: dict[str, Any] | None) -> tuple[SchedulingConfig, list[Issue]]:
    return parse_scheduling(None if block is None else Scheduling.model_validate(block))
