"""API-server-faithful structural schemas: defaulting, pruning, validation and CEL rules.

`SchemaRegistry` loads CRDs and Crossplane XRDs (adding the fields Crossplane
injects into composite resources); each `Schema` defaults, prunes and validates
an object the way a Kubernetes API server handles a create, reporting
`FieldError`s with Kubernetes field paths. `validate_builtin` checks built-in
kinds against the schemas kubernetes-validate ships, and `ManifestValidator`
checks any rendered object with whichever of the two applies. `rule_cost_problems` is a
static lint over a schema's CEL rules, not the API server's cost estimator.
"""

from modelplane_cli.schema.builtin import builtin_versions, validate_builtin
from modelplane_cli.schema.cost import rule_cost_problems
from modelplane_cli.schema.definitions import DefinitionError
from modelplane_cli.schema.errors import FieldError
from modelplane_cli.schema.manifests import ManifestValidator
from modelplane_cli.schema.registry import SchemaRegistry
from modelplane_cli.schema.resource import Schema

__all__ = [
    "DefinitionError",
    "FieldError",
    "ManifestValidator",
    "Schema",
    "SchemaRegistry",
    "builtin_versions",
    "rule_cost_problems",
    "validate_builtin",
]
