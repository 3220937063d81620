"""The list keys of v2.3's Composition CRD, which render's loader checks itself.

render reads the package's Compositions without their CRD, but the API server would
refuse one whose pipeline repeats a key of a keyed list (two steps of one name, two
credentials of one name in a step, two required resources or schemas under one
`requirementName`): each is an `x-kubernetes-list-type: map` in the CRD
(`apiextensions.crossplane.io_compositions.yaml`). The same check as the schema
validator's, in the API server's words.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from modelplane_cli.schema.listtypes import check_list
from modelplane_cli.schema.node import Node


def _keyed(key: str) -> Node:
    return Node(
        {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": [key]}
    )


_STEPS = _keyed("step")
_CREDENTIALS = _keyed("name")
_REQUIREMENTS = _keyed("requirementName")


def repeated_keys(composition: Mapping[str, Any]) -> list[str]:
    """`path: Duplicate value: ...` for each repeat the CRD's list keys refuse."""
    return [
        str(p.error)
        for items, node, path in _lists(composition)
        for p in check_list(items, node, path)
    ]


def _lists(composition: Mapping[str, Any]) -> Iterator[tuple[list[Any], Node, str]]:
    pipeline = _list(_map(composition.get("spec")).get("pipeline"))
    yield pipeline, _STEPS, "spec.pipeline"
    for i, step in enumerate(pipeline):
        at = f"spec.pipeline[{i}]"
        fields = _map(step)
        yield _list(fields.get("credentials")), _CREDENTIALS, f"{at}.credentials"
        requirements = _map(fields.get("requirements"))
        for name in ("requiredResources", "requiredSchemas"):
            yield _list(requirements.get(name)), _REQUIREMENTS, f"{at}.requirements.{name}"


def _map(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return cast(list[Any], value) if isinstance(value, list) else []
