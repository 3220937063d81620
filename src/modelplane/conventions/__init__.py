"""In-cluster scheduler conventions: hand every pod Modelplane emits to the
cluster's GPU scheduler (KAI, Kueue, Volcano, Coscheduling or the default
scheduler) with exactly the keys, fields and gang objects it reads.

`parse_scheduling` validates a cluster's `spec.scheduling` (its generated model)
into a `SchedulingConfig` whose `scheduler` comes from the registry in
`schedulers/`; `apply_conventions` takes a replica's typed rendered workloads and
hands them back, under their keys, with the gang objects they need.

Pure: no Crossplane imports, no I/O, never raises on bad input (every problem
is a `modelplane.core.issues.Issue`).
"""

from modelplane.conventions.apply import (
    ConventionResult,
    apply_conventions,
    replica_prerequisites,
)
from modelplane.conventions.config import SchedulingConfig
from modelplane.conventions.parse import parse_scheduling
from modelplane.conventions.template import TemplateContext

__all__ = [
    "ConventionResult",
    "SchedulingConfig",
    "TemplateContext",
    "apply_conventions",
    "parse_scheduling",
    "replica_prerequisites",
]
