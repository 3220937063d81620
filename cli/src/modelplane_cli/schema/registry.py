"""Schemas by apiVersion and kind, loaded from CRD and XRD documents."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from modelplane_cli import yamlio
from modelplane_cli.schema.definitions import DefinitionError, definitions, is_definition
from modelplane_cli.schema.resource import Schema


def load_documents(path: Path) -> list[dict[str, Any]]:
    """Every mapping document of a YAML file, the items of a `v1 List` expanded
    (`kubectl get crds -o yaml` prints one). DefinitionError when it does not load."""
    try:
        docs = yamlio.load_file(path)
    except yamlio.YAMLError as exc:
        raise DefinitionError(str(exc)) from None
    found: list[dict[str, Any]] = []
    for doc in docs:
        if (
            isinstance(doc, dict)
            and doc.get("kind") == "List"
            and isinstance(doc.get("items"), list)
        ):
            found.extend(item for item in doc["items"] if isinstance(item, dict))
        elif isinstance(doc, dict):
            found.append(doc)
    return found


class SchemaRegistry:
    """Every served kind of the CRDs and XRDs added to it."""

    def __init__(self) -> None:
        self._schemas: dict[tuple[str, str], Schema] = {}

    @classmethod
    def from_files(cls, paths: Iterable[Path]) -> SchemaRegistry:
        """Load every CRD and XRD document in `paths`.

        Other documents in the same files (a Composition next to its XRD, say) are
        skipped; a malformed CRD or XRD raises DefinitionError.
        """
        registry = cls()
        for path in paths:
            for doc in load_documents(Path(path)):
                if is_definition(doc):
                    registry.add_document(doc)
        return registry

    def add_document(self, doc: Mapping[str, Any]) -> None:
        """Add a CRD (apiextensions.k8s.io/v1) or XRD (apiextensions.crossplane.io/v1, v2).

        A later definition of the same apiVersion and kind replaces the earlier one.
        """
        for found in definitions(doc):
            key = (found.api_version, found.kind)
            self._schemas[key] = Schema(found.api_version, found.kind, found.namespaced, found.root)

    def merge(self, other: SchemaRegistry) -> None:
        """Add every schema of `other`; its definitions replace ones of the same kind."""
        self._schemas.update(other._schemas)

    def get(self, api_version: str, kind: str) -> Schema | None:
        return self._schemas.get((api_version, kind))

    def kinds(self) -> list[tuple[str, str]]:
        """Every (apiVersion, kind) served, sorted."""
        return sorted(self._schemas)

    def __len__(self) -> int:
        return len(self._schemas)
