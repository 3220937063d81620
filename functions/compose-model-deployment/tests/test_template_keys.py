"""A role's pod template that repeats an entry Kubernetes keys by (a container name,
a port, an env name, a volume, a mount path): InvalidSpec naming the repeat, every
replica kept, since the workload cluster would refuse every replica's workload
(`core/pod_keys`)."""

import copy
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .asked import fetched, widened
from .objects import FLEET, composed, condition, deployment, event, response
from .test_fn import SERVING

ENGINE = {"name": "engine", "image": "vllm/vllm-openai:v0.7.3"}
SIDE = {"name": "side", "image": "busybox:1.36"}
WHY = "the workload cluster's API server refuses a pod template that repeats it"
KEYED = (
    "LeaderWorkerSet and LLMInferenceService refuse a template that repeats it and a "
    "Deployment's pods keep only the last, so it is refused wherever the replica lands"
)
AT = "spec.workers.template.spec"


def with_spec(spec: dict[str, Any]) -> dict[str, Any]:
    obj = deployment(3)
    obj["spec"]["workers"]["template"] = {"spec": copy.deepcopy(spec)}
    return obj


def refused(spec: dict[str, Any], message: str, case: str) -> Any:
    # Nothing decided: every replica kept exactly as it runs, as the other
    # InvalidSpec cases do (test_template_bounds).
    return pytest.param(
        request(with_spec(spec), required=fetched(FLEET, list(SERVING.values())), observed=SERVING),
        response(
            resources={key: composed(obj, ready=False) for key, obj in SERVING.items()},
            conditions=[condition("ReplicasScheduled", False, "InvalidSpec", message)],
            results=[event("WARNING", "InvalidSpec", message)],
        ),
        id=case,
    )


CASES = [
    refused(
        {"containers": [ENGINE, SIDE, SIDE]},
        f"{AT}.containers[2].name: duplicate container name 'side' (also {AT}.containers[1]): "
        + WHY,
        "two containers named alike",
    ),
    refused(
        {"initContainers": [SIDE], "containers": [ENGINE, SIDE]},
        f"{AT}.containers[1].name: duplicate container name 'side' (also "
        f"{AT}.initContainers[0]): " + WHY,
        "an init container and a container named alike",
    ),
    refused(
        {
            "containers": [
                {**ENGINE, "ports": [{"name": "m", "containerPort": 9000}, {"containerPort": 9000}]}
            ]
        },
        f"{AT}.containers[0].ports[1].containerPort: duplicate port '9000/TCP' (also "
        f"{AT}.containers[0].ports[0]): " + KEYED,
        "one port twice, the default protocol",
    ),
    refused(
        {
            "containers": [
                {
                    **ENGINE,
                    "ports": [
                        {"name": "m", "containerPort": 9000},
                        {"name": "m", "containerPort": 9001},
                    ],
                }
            ]
        },
        f"{AT}.containers[0].ports[1].name: duplicate port name 'm' (also "
        f"{AT}.containers[0].ports[0]): " + WHY,
        "two ports named alike",
    ),
    refused(
        {"containers": [{**ENGINE, "env": [{"name": "A", "value": "1"}, {"name": "A"}]}]},
        f"{AT}.containers[0].env[1].name: duplicate env name 'A' (also "
        f"{AT}.containers[0].env[0]): " + KEYED,
        "one env name twice",
    ),
    refused(
        {"containers": [ENGINE], "volumes": [{"name": "v", "emptyDir": {}}] * 2},
        f"{AT}.volumes[1].name: duplicate volume name 'v' (also {AT}.volumes[0]): " + WHY,
        "two volumes named alike",
    ),
    refused(
        {
            "containers": [
                {
                    **ENGINE,
                    "volumeMounts": [
                        {"name": "a", "mountPath": "/m"},
                        {"name": "b", "mountPath": "/m"},
                    ],
                }
            ],
            "volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
        },
        f"{AT}.containers[0].volumeMounts[1].mountPath: duplicate mount path '/m' (also "
        f"{AT}.containers[0].volumeMounts[0]): " + WHY,
        "two mounts at one path",
    ),
]


@pytest.mark.parametrize(("req", "want"), CASES)
def test_a_repeated_pod_spec_entry_is_refused_naming_it(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


def test_the_same_keys_in_different_places_are_not_repeats() -> None:
    # Ports and env are per container, and one protocol does not repeat another.
    port = {"name": "m", "containerPort": 9000}
    spec = {
        "containers": [
            {
                **ENGINE,
                "ports": [port, {**port, "name": "u", "protocol": "UDP"}],
                "env": [{"name": "A"}],
            },
            {**SIDE, "ports": [port], "env": [{"name": "A"}]},
        ]
    }
    req = request(
        with_spec(spec), required=widened(FLEET, list(SERVING.values())), observed=SERVING
    )
    scheduled = as_dict(run(FunctionRunner(), req))["conditions"][0]
    assert (scheduled["type"], scheduled["reason"]) == ("ReplicasScheduled", "AllReplicasScheduled")
