"""A role's pod template past its bounds (too deep for protobuf to read back, or too
large for other teams' requests to carry): InvalidSpec naming it, every replica kept
(design/deep-templates.md, design/template-size.md)."""

from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner

from modelplane.core.template_size import MAX_TEMPLATE_BYTES, template_bytes
from modelplane_dev.testing import as_dict, request, run

from .asked import fetched, widened
from .objects import FLEET, composed, condition, deployment, event, response
from .test_fn import SERVING


def nested(levels: int) -> object:
    """`levels` objects, one inside the next."""
    value: object = "x"
    for _ in range(levels):
        value = {"n": value}
    return value


def deep_template(obj: dict[str, Any], levels: int) -> dict[str, Any]:
    """`obj` (a deployment) whose engine container carries an unknown field `levels`
    objects deep: its pod spec nests `levels` + 3 levels (spec, containers, the container)."""
    engine = {"name": "engine", "image": "vllm/vllm-openai:v0.7.3", "x-deep": nested(levels)}
    obj["spec"]["workers"]["template"] = {"spec": {"containers": [engine]}}
    return obj


def large_template(obj: dict[str, Any], size: int) -> dict[str, Any]:
    """`obj` (a deployment) whose template is `size` bytes as compact JSON, its engine's
    one argument padded."""

    def template(pad: int) -> dict[str, Any]:
        engine = {"name": "engine", "image": "vllm/vllm-openai:v0.7.3", "args": ["x" * pad]}
        return {"spec": {"containers": [engine]}}

    obj["spec"]["workers"]["template"] = template(size - template_bytes(template(0)))
    assert template_bytes(obj["spec"]["workers"]["template"]) == size
    return obj


TOO_LARGE = (
    f"spec.workers.template: is {MAX_TEMPLATE_BYTES + 1} bytes as JSON, more than the "
    f"{MAX_TEMPLATE_BYTES} a pod template may have: every replica copies it, and other "
    "teams' deployments read the replicas; put large configuration in a ConfigMap the "
    "template mounts"
)
TOO_DEEP = (
    "spec.workers.template.spec.containers[0].x-deep.n.n.n.n.n.n.n.n.n.n.n.n.n: nests deeper "
    "than 16 levels of objects and lists, counting spec.workers.template.spec as the first: "
    "the most a pod spec may have, so that every workload built from it stays readable to "
    "the functions that read it back"
)
SERVING_LISTED = list(SERVING.values())
INVALID_CASES = [
    pytest.param(
        request(
            deep_template(deployment(3), 14),
            required=fetched(FLEET, SERVING_LISTED),
            observed=SERVING,
        ),
        # Nothing decided: every replica kept exactly as it runs (as ready as its own
        # Ready condition says), the fleet still asked for.
        response(
            resources={key: composed(obj, ready=False) for key, obj in SERVING.items()},
            conditions=[condition("ReplicasScheduled", False, "InvalidSpec", TOO_DEEP)],
            results=[event("WARNING", "InvalidSpec", TOO_DEEP)],
        ),
        id="a pod spec nested 17 levels: InvalidSpec naming it, every replica kept",
    ),
    pytest.param(
        request(
            deep_template(deployment(3), 13),
            # A template change: the rollout's surge widened the loop from its clusters.
            required=widened(FLEET, SERVING_LISTED),
            observed=SERVING,
        ),
        None,
        id="a pod spec nested 16 levels: scheduled",
    ),
    pytest.param(
        request(
            large_template(deployment(3), MAX_TEMPLATE_BYTES + 1),
            required=fetched(FLEET, SERVING_LISTED),
            observed=SERVING,
        ),
        response(
            resources={key: composed(obj, ready=False) for key, obj in SERVING.items()},
            conditions=[condition("ReplicasScheduled", False, "InvalidSpec", TOO_LARGE)],
            results=[event("WARNING", "InvalidSpec", TOO_LARGE)],
        ),
        id="a pod template one byte over the bound: InvalidSpec naming it, every replica kept",
    ),
    pytest.param(
        request(
            large_template(deployment(3), MAX_TEMPLATE_BYTES),
            # A template change: the rollout's surge widened the loop from its clusters.
            required=widened(FLEET, SERVING_LISTED),
            observed=SERVING,
        ),
        None,
        id="a pod template at the bound: scheduled",
    ),
]


@pytest.mark.parametrize(("req", "want"), INVALID_CASES)
def test_a_pod_template_past_its_bounds(req: Any, want: dict[str, Any] | None) -> None:
    got = as_dict(run(FunctionRunner(), req))
    if want is None:
        scheduled = got["conditions"][0]
        assert (scheduled["type"], scheduled["reason"]) == (
            "ReplicasScheduled",
            "AllReplicasScheduled",
        )
        return
    assert got == want
