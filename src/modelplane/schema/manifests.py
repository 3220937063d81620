"""Validate anything Modelplane renders, wherever its schema lives.

A custom resource is checked against its CRD, a built-in kind strictly against
the Kubernetes schemas of the cluster's version, and a provider-kubernetes
Object both as itself and through the manifest it carries, so one call covers
an Object and the Deployment, LeaderWorkerSet or PodGroup inside it.
"""

from pathlib import Path
from typing import Any

from modelplane.schema.builtin import validate_builtin
from modelplane.schema.errors import FieldError
from modelplane.schema.registry import SchemaRegistry

_OBJECT_GROUPS = ("kubernetes.m.crossplane.io/", "kubernetes.crossplane.io/")


class ManifestValidator:
    def __init__(self, registry: SchemaRegistry, kubernetes_version: str = "1.34") -> None:
        self.registry = registry
        self.kubernetes_version = kubernetes_version

    @classmethod
    def from_directories(
        cls, *directories: Path, kubernetes_version: str = "1.34"
    ) -> "ManifestValidator":
        """Load every CRD and XRD (`*.yaml`, recursively) under the directories."""
        files = sorted(path for d in directories for path in d.rglob("*.yaml"))
        return cls(SchemaRegistry.from_files(files), kubernetes_version)

    def validate(self, obj: dict[str, Any]) -> list[FieldError]:
        """Problems with `obj` and, for a provider-kubernetes Object, with its manifest.

        Raises LookupError for a kind with no CRD here and no built-in schema.
        """
        schema = self.registry.get(obj.get("apiVersion", ""), obj.get("kind", ""))
        problems = (
            schema.validate(obj)
            if schema is not None
            else validate_builtin(obj, self.kubernetes_version)
        )
        if obj.get("kind") == "Object" and str(obj.get("apiVersion", "")).startswith(
            _OBJECT_GROUPS
        ):
            manifest = obj.get("spec", {}).get("forProvider", {}).get("manifest")
            if isinstance(manifest, dict):
                prefix = "spec.forProvider.manifest"
                problems += [
                    FieldError(f"{prefix}.{p.path}" if p.path else prefix, p.message)
                    for p in self.validate(manifest)
                ]
        return sorted(problems)
