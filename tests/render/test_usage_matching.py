"""Which Usages protect an object, as Crossplane v2.3's webhook finds them
(`internal/protection/usage/finder.go`): by group, kind, name and, for a
namespaced Usage only, namespace."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.render.protection import usages_of
from modelplane_cli.render.world import ObjectKey, World

from .support import OBJECT_API_VERSION


def _usage(api_version: str, kind: str, namespace: str, of_api_version: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "u", **({"namespace": namespace} if namespace else {})}
    of = {"apiVersion": of_api_version, "kind": "Object", "resourceRef": {"name": "o"}}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": {"of": of}}


@pytest.mark.parametrize(
    ("api_version", "kind", "namespace", "protected"),
    [
        # A namespaced Usage protects its own namespace's object only.
        ("protection.crossplane.io/v1beta1", "Usage", "ns", ["ns"]),
        # The webhook indexes these with namespace "": that name in any namespace.
        ("protection.crossplane.io/v1beta1", "ClusterUsage", "", ["ns", "other"]),
        ("apiextensions.crossplane.io/v1beta1", "Usage", "", ["ns", "other"]),
    ],
)
def test_usages_match_by_group_and_as_the_webhook_indexes_their_namespace(
    api_version: str, kind: str, namespace: str, protected: list[str]
) -> None:
    # `of` names another served version of the group: the index keys by group.
    usage = _usage(api_version, kind, namespace, "kubernetes.m.crossplane.io/v1alpha2")
    found: list[str] = []
    for where in ("ns", "other"):
        target = ObjectKey(OBJECT_API_VERSION, "Object", where, "o")
        obj = {
            "apiVersion": OBJECT_API_VERSION,
            "kind": "Object",
            "metadata": {"name": "o", "namespace": where},
        }
        if usages_of(World([usage, obj]), target):
            found.append(where)
    assert found == protected
