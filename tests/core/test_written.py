"""`as_written`: a model carried onward exactly as its author wrote it."""

from typing import Any

import pytest
from modelplane_models.inference_cluster import NodePool
from modelplane_models.model_deployment import Workers

from modelplane.core.written import as_written

TEMPLATE: dict[str, Any] = {
    "spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.11.0"}]}
}


@pytest.mark.parametrize(
    ("model", "written"),
    [
        # Defaults the schema fills in (count 1, an empty topology) are not written.
        (Workers, {"template": TEMPLATE}),
        (Workers, {"count": 1, "template": TEMPLATE}),
        (NodePool, {"name": "h100", "className": "h100-8x", "nodeCount": 4}),
        (NodePool, {"name": "h100", "className": "h100-8x", "nodeCount": 4, "maxNodes": 8}),
    ],
)
def test_what_was_written_is_what_comes_back(model: Any, written: dict[str, Any]) -> None:
    assert as_written(model.model_validate(written)) == written
