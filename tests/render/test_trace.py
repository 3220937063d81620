"""`--trace`: a deployment's match trace as status has it, one line per cluster again."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.render.apis import Apis, default_apis_dir
from modelplane_cli.render.loader import Document
from modelplane_cli.render.summary import table
from modelplane_cli.render.trace import TraceError, every_cluster, resolve


def _deployment(name: str, trace: list[dict[str, Any]] | None) -> dict[str, Any]:
    status = {} if trace is None else {"matchTrace": trace}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": "ml"},
        "status": status,
    }


def test_grouped_entries_are_ungrouped_in_the_schedulers_order() -> None:
    trace = [
        {
            "cluster": "a",
            "clusters": 2,
            "clusterNames": ["a", "c"],
            "pool": "l4",
            "reason": "SelectorMismatch",
            "message": "false",
        },
        {"cluster": "b", "reason": "NoPools", "message": "no pools"},
        {
            "cluster": "c",
            "clusters": 2,
            "clusterNames": ["c", "d"],
            "reason": "InsufficientCapacity",
            "message": "full",
        },
    ]
    out = every_cluster([_deployment("chat", trace)], ["ml/chat"], table)
    assert out.splitlines() == [
        "MATCH TRACE, EVERY CLUSTER  ModelDeployment ml/chat",
        "CLUSTER  POOL  ROLE  REASON                MESSAGE",
        "a        l4    -     SelectorMismatch      false",
        "b        -     -     NoPools               no pools",
        # c's own rejection before its pool's, as the scheduler traced them.
        "c        -     -     InsufficientCapacity  full",
        "c        l4    -     SelectorMismatch      false",
        "d        -     -     InsufficientCapacity  full",
    ]


def test_a_deployment_without_rejections_or_gone_says_so() -> None:
    out = every_cluster([_deployment("chat", [])], ["ml/chat", "ml/gone"], table)
    assert out.split("\n\n") == [
        "MATCH TRACE, EVERY CLUSTER  ModelDeployment ml/chat\n(no cluster or pool rejected)",
        "MATCH TRACE, EVERY CLUSTER  ModelDeployment ml/gone\n(deleted by the render)",
    ]


def test_names_resolve_to_one_deployment_or_fail() -> None:
    apis = Apis.load(default_apis_dir())
    docs = [
        Document(f"f.yaml:{i}", _deployment(name, None) | {"metadata": meta})
        for i, (name, meta) in enumerate(
            [
                ("chat", {"name": "chat", "namespace": "a"}),
                ("chat", {"name": "chat", "namespace": "b"}),
                ("solo", {"name": "solo"}),  # the API server defaults the namespace
            ]
        )
    ]
    assert resolve(["solo", "a/chat", "default/solo"], docs, apis) == ["default/solo", "a/chat"]
    with pytest.raises(TraceError) as raised:
        resolve(["chat", "c/chat", "solo"], docs, apis)
    assert str(raised.value).splitlines() == [
        "--trace chat: several ModelDeployments of that name (a/chat, b/chat); give NAMESPACE/NAME",
        "--trace c/chat: no ModelDeployment of that name in the input",
    ]
