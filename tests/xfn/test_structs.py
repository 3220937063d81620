"""`pick`: a few fields of a large Struct, converted as `to_dict` converts them."""

from typing import Any

import pytest

from modelplane.xfn.structs import pick, to_dict, to_struct

OBJECT: dict[str, Any] = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "spec": {
        "forProvider": {"manifest": {"kind": "Deployment", "spec": {"replicas": 3}}},
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "east"},
    },
    "status": {"conditions": [{"type": "Synced", "status": "True", "observedGeneration": 2}]},
}


@pytest.mark.parametrize(
    ("paths", "want"),
    [
        ((("kind",),), {"kind": "Object"}),
        (
            (("spec", "providerConfigRef"), ("status", "conditions")),
            {
                "spec": {"providerConfigRef": OBJECT["spec"]["providerConfigRef"]},
                "status": {"conditions": OBJECT["status"]["conditions"]},
            },
        ),
        # Absent, or through something that is not an object: left out.
        ((("metadata", "labels"), ("kind", "name"), ("spec", "missing")), {}),
    ],
)
def test_pick_takes_only_the_paths(paths: tuple[tuple[str, ...], ...], want: Any) -> None:
    assert pick(to_struct(OBJECT), *paths) == want


def test_picking_every_top_level_field_is_to_dict() -> None:
    struct = to_struct(OBJECT)
    got = pick(struct, *((key,) for key in OBJECT))
    assert got == to_dict(struct)
    assert isinstance(got["status"]["conditions"][0]["observedGeneration"], int)
