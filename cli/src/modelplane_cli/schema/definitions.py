"""The served kinds a CRD or a Crossplane XRD defines, with their root schemas."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from modelplane_cli.schema import crossplane

CRD_API_VERSION = "apiextensions.k8s.io/v1"
XRD_API_VERSIONS = ("apiextensions.crossplane.io/v1", "apiextensions.crossplane.io/v2")
CRD_KIND = "CustomResourceDefinition"
XRD_KIND = "CompositeResourceDefinition"
# The XRD CRD's own defaults, which the API server applied when the XRD was created.
_DEFAULT_UPDATE_POLICY = "Automatic"
_DEFAULT_DELETE_POLICY = "Background"


class DefinitionError(ValueError):
    """A document that is not a usable CRD or XRD."""


@dataclass(frozen=True)
class Definition:
    """One served version of one kind."""

    api_version: str
    kind: str
    namespaced: bool
    root: Mapping[str, Any]


def is_definition(doc: Mapping[str, Any]) -> bool:
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    return (api_version == CRD_API_VERSION and kind == CRD_KIND) or (
        api_version in XRD_API_VERSIONS and kind == XRD_KIND
    )


def definitions(doc: Mapping[str, Any]) -> list[Definition]:
    """Every served version `doc` defines; raises DefinitionError for anything else."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if api_version == CRD_API_VERSION and kind == CRD_KIND:
        return list(_from_crd(doc))
    if api_version in XRD_API_VERSIONS and kind == XRD_KIND:
        return list(_from_xrd(doc))
    raise DefinitionError(f"not a CRD or an XRD: {api_version}/{kind}")


def _name(doc: Mapping[str, Any]) -> str:
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else "<unnamed>"


def _spec(doc: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, str]:
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        raise DefinitionError(f"{_name(doc)}: spec is missing")
    group = spec.get("group")
    names = spec.get("names")
    kind = names.get("kind") if isinstance(names, Mapping) else None
    if not isinstance(group, str) or not isinstance(kind, str):
        raise DefinitionError(f"{_name(doc)}: spec.group and spec.names.kind are required")
    return spec, group, kind


def _versions(doc: Mapping[str, Any], spec: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    versions = spec.get("versions")
    if not isinstance(versions, list):
        raise DefinitionError(f"{_name(doc)}: spec.versions is missing")
    for version in versions:
        if not isinstance(version, Mapping) or version.get("served") is False:
            continue
        name = version.get("name")
        if not isinstance(name, str):
            raise DefinitionError(f"{_name(doc)}: a version has no name")
        schema = version.get("schema")
        root = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
        if not isinstance(root, Mapping):
            raise DefinitionError(f"{_name(doc)}: version {name} has no openAPIV3Schema")
        yield name, root


def _from_crd(doc: Mapping[str, Any]) -> Iterator[Definition]:
    spec, group, kind = _spec(doc)
    namespaced = spec.get("scope") == "Namespaced"
    for version, root in _versions(doc, spec):
        yield Definition(f"{group}/{version}", kind, namespaced, root)


def _from_xrd(doc: Mapping[str, Any]) -> Iterator[Definition]:
    spec, group, kind = _spec(doc)
    modern = doc.get("apiVersion") == XRD_API_VERSIONS[1]
    default_scope = crossplane.NAMESPACED if modern else crossplane.LEGACY_CLUSTER
    scope = spec.get("scope") or default_scope
    if scope not in (crossplane.NAMESPACED, crossplane.CLUSTER, crossplane.LEGACY_CLUSTER):
        raise DefinitionError(f"{_name(doc)}: unsupported scope {scope!r}")
    policy = spec.get("defaultCompositionUpdatePolicy") or _DEFAULT_UPDATE_POLICY
    extra_spec = crossplane.spec_props(scope, policy)
    extra_status = crossplane.status_props(scope)
    claim_names = spec.get("claimNames")
    claim_kind = claim_names.get("kind") if isinstance(claim_names, Mapping) else None
    delete_policy = spec.get("defaultCompositeDeletePolicy") or _DEFAULT_DELETE_POLICY
    for version, user in _versions(doc, spec):
        api_version = f"{group}/{version}"
        root = crossplane.derive(user, extra_spec, extra_status)
        yield Definition(api_version, kind, scope == crossplane.NAMESPACED, root)
        if scope == crossplane.LEGACY_CLUSTER and isinstance(claim_kind, str):
            claim_root = crossplane.derive(
                user,
                crossplane.claim_spec_props(delete_policy),
                crossplane.status_props(crossplane.LEGACY_CLUSTER),
            )
            yield Definition(api_version, claim_kind, True, claim_root)
