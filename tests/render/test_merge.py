"""A composed resource's apply over the stored object, against server-side apply's rules.

Each case is what Kubernetes leaves after Crossplane's forced apply under the
composite's field manager (`ComposedFieldOwnerName`), with the upgrader
(`ssa.PatchingManagedFieldsUpgrader`) run first.
"""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.render.merge import composed_field_owner, merge
from modelplane_cli.render.world import ObjectKey

XR = ObjectKey("example.org/v1", "XParent", "team-a", "web")
MINE = composed_field_owner(XR)
COMPOSITE = {"crossplane.io/composite": "web"}


def _entry(manager: str, operation: str = "Apply", **meta: dict[str, Any]) -> dict[str, Any]:
    fields = {f"f:{name}": {f"f:{k}": {} for k in keys} for name, keys in meta.items()}
    return {"manager": manager, "operation": operation, "fieldsV1": {"f:metadata": fields}}


def _object(managed: list[dict[str, Any]] | None = None, **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "c", "namespace": "team-a", **meta}
    if managed is not None:
        metadata["managedFields"] = managed
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


def _apply(existing: dict[str, Any] | None, **meta: Any) -> dict[str, Any]:
    return merge(XR, _object(**meta), existing)


def test_a_label_taken_by_force_goes_when_no_longer_desired() -> None:
    existing = _object(
        [
            _entry("kubectl-client-side-apply", "Update", labels={"team": {}}),
            _entry(MINE, labels={"crossplane.io/composite": {}}),
        ],
        labels={**COMPOSITE, "team": "a"},
    )

    taken = _apply(existing, labels={**COMPOSITE, "team": "b"})
    dropped = _apply(taken, labels=COMPOSITE)

    assert taken["metadata"]["labels"] == {**COMPOSITE, "team": "b"}
    # The other manager's entry owned only `team`, so it goes with it.
    assert [e["manager"] for e in taken["metadata"]["managedFields"]] == [MINE]
    assert dropped["metadata"]["labels"] == COMPOSITE


def test_a_label_applied_with_the_same_value_is_shared_and_stays() -> None:
    existing = _object(
        [
            _entry("kubectl-label", "Update", labels={"team": {}}),
            _entry(MINE, labels={"crossplane.io/composite": {}}),
        ],
        labels={**COMPOSITE, "team": "a"},
    )

    shared = _apply(existing, labels={**COMPOSITE, "team": "a"})
    dropped = _apply(shared, labels=COMPOSITE)

    assert dropped["metadata"]["labels"] == {**COMPOSITE, "team": "a"}


def test_an_annotation_only_the_composite_owns_goes_even_crossplane_runtime_s() -> None:
    existing = _object(
        [
            _entry(
                MINE,
                labels={"crossplane.io/composite": {}},
                annotations={"crossplane.io/external-name": {}},
            ),
            {
                "manager": "provider-aws",
                "operation": "Update",
                "fieldsV1": {"f:metadata": {"f:finalizers": {}}},
            },
        ],
        labels=COMPOSITE,
        annotations={"crossplane.io/external-name": "old-bucket"},
    )

    applied = _apply(existing, labels=COMPOSITE)

    assert "annotations" not in applied["metadata"]


def test_crossplane_runtime_s_annotations_stay_when_no_managed_fields_are_recorded() -> None:
    existing = _object(
        labels={**COMPOSITE, "team": "a"},
        annotations={"crossplane.io/external-name": "bucket", "note": "x"},
    )

    applied = _apply(existing, labels=COMPOSITE)

    assert applied["metadata"]["labels"] == COMPOSITE
    assert applied["metadata"]["annotations"] == {"crossplane.io/external-name": "bucket"}


@pytest.mark.parametrize(
    "managed",
    [
        # Upgraded: `legacy` is listed by no entry, so nobody owns it.
        [_entry(MINE, labels={"crossplane.io/composite": {}})],
        # Upgraded, `before-first-apply` not yet deleted: the upgrader deletes it first.
        [
            _entry(MINE, labels={"crossplane.io/composite": {}}),
            _entry("before-first-apply", "Update", labels={"legacy": {}}),
        ],
        # Not upgraded: the upgrader clears the record, so every field is unowned.
        [_entry("kubectl-client-side-apply", "Update", labels={"crossplane.io/composite": {}})],
    ],
    ids=["unlisted", "before-first-apply", "not-upgraded"],
)
def test_a_label_nobody_owns_stays(managed: list[dict[str, Any]]) -> None:
    existing = _object(managed, labels={**COMPOSITE, "legacy": "y"})

    applied = _apply(existing, labels=COMPOSITE)

    assert applied["metadata"]["labels"] == {**COMPOSITE, "legacy": "y"}


def test_a_label_the_composite_stops_desiring_goes_and_leaves_its_record() -> None:
    existing = _object(
        [_entry(MINE, labels={"crossplane.io/composite": {}, "tier": {}})],
        labels={**COMPOSITE, "tier": "gold"},
    )

    applied = _apply(existing, labels=COMPOSITE)

    assert applied["metadata"]["labels"] == COMPOSITE
    assert applied["metadata"]["managedFields"] == [
        _entry(MINE, labels={"crossplane.io/composite": {}})
    ]


def test_the_record_is_left_alone_when_the_apply_changes_no_ownership() -> None:
    managed = [
        _entry("kubectl-label", "Update", labels={"team": {}}),
        _entry(MINE, labels={"crossplane.io/composite": {}}),
    ]
    existing = _object(managed, labels={**COMPOSITE, "team": "a"})

    applied = _apply(existing, labels=COMPOSITE)

    assert applied["metadata"]["managedFields"] is managed


def test_finalizers_are_a_set_another_manager_s_stay() -> None:
    provider = "finalizer.managedresource.crossplane.io"
    existing = _object(
        [
            _entry(MINE, labels={"crossplane.io/composite": {}}),
            {
                "manager": "provider-aws",
                "operation": "Update",
                "fieldsV1": {"f:metadata": {"f:finalizers": {f'v:"{provider}"': {}}}},
            },
        ],
        labels=COMPOSITE,
        finalizers=[provider],
    )

    added = _apply(existing, labels=COMPOSITE, finalizers=["example.org/keep"])
    dropped = _apply(added, labels=COMPOSITE)

    assert added["metadata"]["finalizers"] == [provider, "example.org/keep"]
    assert dropped["metadata"]["finalizers"] == [provider]


def test_finalizers_all_stay_when_no_managed_fields_are_recorded() -> None:
    existing = _object(labels=COMPOSITE, finalizers=["finalizer.managedresource.crossplane.io"])

    applied = _apply(existing, labels=COMPOSITE, finalizers=["example.org/keep"])

    assert applied["metadata"]["finalizers"] == [
        "finalizer.managedresource.crossplane.io",
        "example.org/keep",
    ]
