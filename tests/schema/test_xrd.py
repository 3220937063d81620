"""Crossplane XRDs: the author's schema plus the fields Crossplane adds to composites."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane_cli.schema import DefinitionError, ManifestValidator, Schema, SchemaRegistry

from .support import Obj

USER_SCHEMA: Obj = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["model"],
            "x-kubernetes-validations": [
                {
                    "rule": "self.replicas <= 8",
                    "message": "at most 8 replicas",
                    "fieldPath": ".replicas",
                }
            ],
            "properties": {
                "model": {"type": "string"},
                "replicas": {"type": "integer", "default": 1},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}


def xrd(api: str = "v2", scope: str | None = None, **spec_extra: Any) -> Obj:
    spec: Obj = {
        "group": "example.org",
        "names": {"kind": "XWidget", "plural": "xwidgets"},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "referenceable": True,
                "schema": {"openAPIV3Schema": USER_SCHEMA},
            },
            {
                "name": "v0",
                "served": False,
                "referenceable": False,
                "schema": {"openAPIV3Schema": USER_SCHEMA},
            },
        ],
        **spec_extra,
    }
    if scope is not None:
        spec["scope"] = scope
    return {
        "apiVersion": f"apiextensions.crossplane.io/{api}",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "xwidgets.example.org"},
        "spec": spec,
    }


def schema_of(doc: Obj, kind: str = "XWidget") -> Schema:
    registry = SchemaRegistry()
    registry.add_document(doc)
    found = registry.get("example.org/v1alpha1", kind)
    assert found is not None
    return found


def composite(
    spec: Obj,
    *,
    namespace: str | None = "team-a",
    name: str = "w",
    kind: str = "XWidget",
    **extra: Any,
) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "apiVersion": "example.org/v1alpha1",
        "kind": kind,
        "metadata": meta,
        "spec": spec,
        **extra,
    }


SKIPPED = (
    "Invalid value: null: some validation rules were not checked because the object was "
    "invalid; correct the existing errors to complete validation"
)


def errors(schema: Schema, obj: Obj) -> list[str]:
    """What a create reports: defaults first, then validation."""
    return [str(e) for e in schema.admit(obj)[1]]


CONDITION: Obj = {
    "type": "Ready",
    "status": "True",
    "reason": "Available",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}
MACHINERY: Obj = {
    "compositionRef": {"name": "widgets"},
    "compositionSelector": {"matchLabels": {"tier": "gold"}},
    "compositionRevisionRef": {"name": "widgets-abc"},
    "compositionRevisionSelector": {"matchLabels": {"channel": "stable"}},
    "compositionUpdatePolicy": "Manual",
    "resourceRefs": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm"}],
}


def test_v2_defaults_to_namespaced_and_only_serves_served_versions() -> None:
    registry = SchemaRegistry()
    registry.add_document(xrd())
    assert registry.kinds() == [("example.org/v1alpha1", "XWidget")]
    schema = registry.get("example.org/v1alpha1", "XWidget")
    assert schema is not None and schema.namespaced


def test_v2_accepts_crossplane_machinery_under_spec_crossplane() -> None:
    obj = composite(
        {"model": "m", "crossplane": MACHINERY},
        status={"phase": "Up", "conditions": [CONDITION]},
    )
    assert errors(schema_of(xrd()), obj) == []


def test_v2_status_has_no_crossplane_connection_details() -> None:
    # crossplane-runtime v2.3.0 pkg/xcrd/schemas.go CompositeResourceStatusProps:
    # "Modern XRs don't have connection details", so no status.crossplane either.
    for scope in ("Namespaced", "Cluster"):
        obj = composite(
            {"model": "m"},
            namespace="default" if scope == "Namespaced" else None,
            status={"crossplane": {"connectionDetails": {}}},
        )
        assert errors(schema_of(xrd(scope=scope)), obj) == [
            'status.crossplane: unknown field "status.crossplane"'
        ], scope


def test_v2_rejects_machinery_mistakes() -> None:
    crossplane = {
        "compositionRef": {},
        "compositionUpdatePolicy": "Sometimes",
        "resourceRefs": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "namespace": "other"}
        ],
        "claimRef": {"name": "c"},
    }
    bad_condition = {"type": "Ready", "status": "True", "lastTransitionTime": "soon"}
    obj = composite(
        {"model": "m", "crossplane": crossplane},
        status={"conditions": [bad_condition, dict(CONDITION)]},
    )
    assert errors(schema_of(xrd()), obj) == [
        SKIPPED,
        'spec.crossplane.claimRef: unknown field "spec.crossplane.claimRef"',
        "spec.crossplane.compositionRef.name: Required value",
        'spec.crossplane.compositionUpdatePolicy: UnsupportedValueError value: "Sometimes": supported '
        'values: "Automatic", "Manual"',
        "spec.crossplane.resourceRefs[0].namespace: unknown field "
        '"spec.crossplane.resourceRefs[0].namespace"',
        'status.conditions[0].lastTransitionTime: Invalid value: "soon": '
        'status.conditions[0].lastTransitionTime in body must be of type date-time: "soon"',
        "status.conditions[0].reason: Required value",
        'status.conditions[1]: Duplicate value: {"type":"Ready"}',
    ]


def test_cluster_scope_allows_resource_ref_namespaces_and_forbids_a_namespace() -> None:
    schema = schema_of(xrd(scope="Cluster"))
    assert not schema.namespaced
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "namespace": "other"}]
    assert (
        errors(
            schema, composite({"model": "m", "crossplane": {"resourceRefs": refs}}, namespace=None)
        )
        == []
    )
    assert errors(schema, composite({"model": "m"})) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


def test_author_schema_still_applies() -> None:
    schema = schema_of(xrd())
    defaulted, found = schema.admit(composite({"colour": "red"}))
    assert defaulted["spec"]["replicas"] == 1
    assert [str(e) for e in found] == [
        SKIPPED,
        'spec.colour: unknown field "spec.colour"',
        "spec.model: Required value",
    ]
    assert errors(schema, composite({"model": "m", "replicas": 9})) == [
        'spec.replicas: Invalid value: "object": at most 8 replicas'
    ]


def test_composite_names_are_label_values() -> None:
    obj = composite({"model": "m"}, name="n" * 64)
    assert errors(schema_of(xrd()), obj) == [
        SKIPPED,
        "metadata.name: Too long: may not be more than 63 bytes",
    ]


def test_update_policy_default_follows_the_xrd() -> None:
    manual = schema_of(xrd(defaultCompositionUpdatePolicy="Manual"))
    assert manual.default(composite({"model": "m", "crossplane": {}}))["spec"]["crossplane"] == {
        "compositionUpdatePolicy": "Manual"
    }
    automatic = schema_of(xrd())
    assert automatic.default(composite({"model": "m", "crossplane": {}}))["spec"]["crossplane"] == {
        "compositionUpdatePolicy": "Automatic"
    }
    # No spec.crossplane, no default: defaults need their parent.
    assert "crossplane" not in automatic.default(composite({"model": "m"}))["spec"]


def test_v1_legacy_cluster_keeps_machinery_directly_under_spec() -> None:
    schema = schema_of(xrd(api="v1", claimNames={"kind": "Widget", "plural": "widgets"}))
    assert not schema.namespaced
    spec = {
        "model": "m",
        **MACHINERY,
        "claimRef": {
            "apiVersion": "example.org/v1alpha1",
            "kind": "Widget",
            "namespace": "a",
            "name": "w",
        },
        "writeConnectionSecretToRef": {"name": "s", "namespace": "a"},
    }
    status = {"conditions": [CONDITION], "connectionDetails": {}, "claimConditionTypes": ["Ready"]}
    assert errors(schema, composite(spec, namespace=None, status=status)) == []
    assert errors(schema, composite({"model": "m", "crossplane": {}}, namespace=None)) == [
        'spec.crossplane: unknown field "spec.crossplane"'
    ]


def test_v1_claims_are_namespaced_with_claim_fields() -> None:
    claim = schema_of(
        xrd(api="v1", claimNames={"kind": "Widget", "plural": "widgets"}), kind="Widget"
    )
    assert claim.namespaced
    defaulted, found = claim.admit(composite({"model": "m"}, kind="Widget"))
    assert found == []
    assert defaulted["spec"]["compositeDeletePolicy"] == "Background"


def test_v1_namespaced_scope_uses_spec_crossplane() -> None:
    schema = schema_of(xrd(api="v1", scope="Namespaced"))
    assert schema.namespaced
    assert errors(schema, composite({"model": "m", "crossplane": MACHINERY})) == []


@pytest.mark.parametrize(
    "doc",
    [
        {"apiVersion": "v1", "kind": "ConfigMap"},
        {
            "apiVersion": "apiextensions.crossplane.io/v2",
            "kind": "CompositeResourceDefinition",
            "spec": {},
        },
        {
            "apiVersion": "apiextensions.crossplane.io/v2",
            "kind": "CompositeResourceDefinition",
            "spec": {
                "group": "g",
                "names": {"kind": "K"},
                "versions": [{"name": "v1", "served": True}],
            },
        },
    ],
)
def test_add_document_rejects_non_definitions(doc: Obj) -> None:
    with pytest.raises(DefinitionError):
        SchemaRegistry().add_document(doc)


def test_from_files_skips_other_documents(tmp_path: Path) -> None:
    composition = {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        "metadata": {"name": "c"},
    }
    path = tmp_path / "api.yaml"
    path.write_text(yaml.safe_dump_all([xrd(), None, composition]))
    assert SchemaRegistry.from_files([path]).kinds() == [("example.org/v1alpha1", "XWidget")]


def test_xrds_validate_against_crossplanes_own_crd(manifest_validator: ManifestValidator) -> None:
    schema = manifest_validator.registry.get(
        "apiextensions.crossplane.io/v2", "CompositeResourceDefinition"
    )
    assert schema is not None and not schema.namespaced
    assert [str(e) for e in schema.admit(xrd())[1]] == []
    claimed = xrd(claimNames={"kind": "Widget", "plural": "widgets"})
    assert [str(e) for e in schema.admit(claimed)[1]] == [
        'spec: Invalid value: "object": Claims aren\'t supported in apiextensions.crossplane.io/v2'
    ]
