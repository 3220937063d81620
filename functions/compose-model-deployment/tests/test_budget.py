"""A deployment whose selectors cost more than one decision's CEL budget: held, and said."""

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_dev.fuzz import run_function
from modelplane_dev.testing import as_dict, request, run

from .asked import fetched
from .objects import A0, B0, FLEET, deployment, observed_in_namespace, replica


def _costly(tag: str) -> str:
    """Holds on every device; 433,330 cost units, far more than a decision can pay to
    evaluate (40,000), and the costliest of its shape whose cel-go estimate (982,213)
    the API server admits."""
    expression = f'device.driver != "{tag}"'
    for level, size in enumerate((10, 10, 10, 10, 13)):
        items = ", ".join(str(i) for i in range(size))
        expression = f"[{items}].all(v{level}, {expression})"
    return expression


def test_a_decision_over_budget_keeps_running_replicas_and_warns() -> None:
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    hostile = deployment(3)
    devices = hostile["spec"]["nodeSelector"]["devices"]
    devices[0]["selectors"] = [{"cel": _costly("first")}]
    req = request(
        hostile,
        required=fetched(FLEET, list(running.values())),
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))

    assert sorted(got["desired"]["resources"]) == [A0, B0]
    for name, obj in running.items():
        assert got["desired"]["resources"][name]["resource"]["spec"] == obj["spec"]
    scheduled = got["conditions"][0]
    where = (
        "the scheduling decision's CEL budget of 1,000,000 cost units ran out evaluating "
        f"selector {_costly('first')!r} of request 'gpu' on device gpu, "
        "cluster a pool h100"
    )
    assert scheduled == {
        "type": "ReplicasScheduled",
        "status": "STATUS_CONDITION_FALSE",
        "reason": "CELBudgetExceeded",
        "message": f"{where}; keeping 2 existing replicas as recorded and placing nothing new",
        "target": "TARGET_COMPOSITE",
    }
    warnings = [r for r in got["results"] if r["severity"] == "SEVERITY_WARNING"]
    assert [(w["reason"], w["message"]) for w in warnings] == [
        ("CELBudgetExceeded", scheduled["message"])
    ]
    trace = got["desired"]["composite"]["resource"]["status"]["matchTrace"]
    assert trace == [
        {
            "cluster": "a",
            "pool": "h100",
            "reason": "CELBudgetExceeded",
            "message": f"{where}: the decision stopped there",
        }
    ]


def _hostile_requests() -> list[Any]:
    """Deployments whose selectors the XRD admits and that used to answer by the clock:
    two far over what a decision can evaluate, a 10 KB one, and one nested 32 deep."""
    running = {A0: observed_in_namespace(replica(A0, "a", 0, serving=True))}
    variants = [
        [_costly("first"), _costly("second")],
        ["true" + " && true" * 1279],
        ["(" * 32 + 'device.driver == "gpu.nvidia.com"' + ")" * 32],
        [_costly(f"s{i}") for i in range(8)],
    ]
    requests: list[Any] = []
    for selectors in variants:
        obj = deployment(2)
        obj["spec"]["nodeSelector"]["devices"][0]["selectors"] = [{"cel": s} for s in selectors]
        requests.append(
            request(
                obj,
                required=fetched(FLEET, list(running.values())),
                observed=running,
            )
        )
    return requests


def _answers(runner: FunctionRunner, requests: list[Any]) -> list[bytes]:
    """The runner's answers; a runner keeps what it compiled and converted (its
    `CelEngine`), so a fresh one answers cold and one that answered before warm."""
    return [run_function(runner, req).SerializeToString(deterministic=True) for req in requests]


def test_hostile_selectors_answer_the_same_cold_warm_throttled_and_in_another_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    requests = _hostile_requests()
    runner = FunctionRunner()
    cold = _answers(runner, requests)
    assert _answers(runner, requests) == cold  # warm: every selector compiled before
    for answer in cold:
        rsp = fnv1.RunFunctionResponse.FromString(answer)
        assert "spent" not in str(rsp.conditions)  # nothing that counts differently

    # A machine so loaded that every reading of the clock is ten seconds later.
    ticks = itertools.count(step=10.0)
    for name in ("monotonic", "perf_counter", "time"):
        monkeypatch.setattr(time, name, lambda: next(ticks))
    assert _answers(FunctionRunner(), requests) == cold

    # Another process, with its own hash seed and nothing compiled.
    for i, req in enumerate(requests):
        (tmp_path / f"{i}.req").write_bytes(req.SerializeToString())
    script = (
        "import sys, pathlib\n"
        "from compose_model_deployment.fn import FunctionRunner\n"
        "from crossplane.function.proto.v1 import run_function_pb2 as fnv1\n"
        "from modelplane_dev.fuzz import run_function\n"
        "for path in sorted(pathlib.Path(sys.argv[1]).glob('*.req')):\n"
        "    req = fnv1.RunFunctionRequest.FromString(path.read_bytes())\n"
        "    rsp = run_function(FunctionRunner(), req)\n"
        "    path.with_suffix('.rsp').write_bytes(rsp.SerializeToString(deterministic=True))\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        capture_output=True,
    )
    other = [(tmp_path / f"{i}.rsp").read_bytes() for i in range(len(requests))]
    assert other == cold
