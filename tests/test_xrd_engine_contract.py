"""The ModelDeployment XRD admits the engine contract's own port and variables only
where Modelplane puts them, and refuses a container that would claim them."""

import pytest

from modelplane.workloads.pods import CONTRACT_ENV
from tests.test_xrds import DEPLOYMENT, WORKERS, Obj, edited, errors

ENGINE = "spec.workers.template.spec.containers.0"
CONTAINERS = "spec.workers.template.spec.containers"
SIDECAR: Obj = {"name": "proxy", "image": "envoy"}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            edited(DEPLOYMENT, f"{ENGINE}.ports", [{"name": "http", "containerPort": 8080}]),
            "spec.workers.template.spec.containers[0].ports: Forbidden: the port name http is "
            "Modelplane's: the engine's port 8000",
            id="http names only the engine's 8000",
        ),
        pytest.param(
            edited(DEPLOYMENT, f"{ENGINE}.ports", [{"name": "api", "containerPort": 8000}]),
            "containers[0].ports: Forbidden: port 8000 is the engine's serving port, named http",
            id="8000 is not renamed",
        ),
        pytest.param(
            edited(
                DEPLOYMENT,
                CONTAINERS,
                [
                    WORKERS["template"]["spec"]["containers"][0],
                    {**SIDECAR, "ports": [{"containerPort": 8000}]},
                ],
            ),
            "containers[1].ports: Forbidden: port 8000 is the engine's serving port",
            id="a sidecar does not take 8000",
        ),
        pytest.param(
            edited(DEPLOYMENT, f"{ENGINE}.env", [{"name": "MODELPLANE_NODE_RANK", "value": "1"}]),
            "containers[0].env: Forbidden: MODELPLANE_NODE_RANK, MODELPLANE_NODE_COUNT, "
            "MODELPLANE_LEADER_ADDRESS, MODELPLANE_MODEL_NAME, MODELPLANE_MODEL_URI, "
            "MODELPLANE_PREFILL_ADDRESS and MODELPLANE_MODEL_PATH are set by Modelplane",
            id="the injected env is Modelplane's",
        ),
        # Every variable the functions refuse (`CONTRACT_ENV`) is refused at admission.
        *(
            pytest.param(
                edited(DEPLOYMENT, f"{ENGINE}.env", [{"name": name, "value": "x"}]),
                "containers[0].env: Forbidden: MODELPLANE_NODE_RANK",
                id=f"{name} is Modelplane's",
            )
            for name in CONTRACT_ENV
        ),
        pytest.param(
            edited(DEPLOYMENT, f"{ENGINE}.env", [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "0"}]),
            "containers[0].env: Forbidden: NVIDIA_VISIBLE_DEVICES would expose GPUs outside",
            id="no container names the GPUs the runtime exposes",
        ),
        pytest.param(
            edited(DEPLOYMENT, "spec.model", {"uri": "Qwen/Qwen2.5-7B"}),
            "spec.model.uri: Invalid value",
            id="a model URI has a scheme",
        ),
    ],
)
def test_the_engine_contract_is_checked_at_admission(obj: Obj, expected: str) -> None:
    problems = errors(obj)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    "ports",
    [
        [{"name": "http", "containerPort": 8000}],
        [{"containerPort": 8000}],
        [{"name": "metrics", "containerPort": 9090}],
    ],
)
def test_the_engine_may_declare_its_own_port_as_modelplane_does(ports: list[Obj]) -> None:
    obj = edited(DEPLOYMENT, f"{ENGINE}.ports", ports)
    obj = edited(obj, f"{ENGINE}.env", [{"name": "MODEL", "value": "kimi"}])
    assert errors(obj) == []
