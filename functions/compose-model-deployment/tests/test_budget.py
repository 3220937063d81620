"""A deployment whose selectors cost more than one decision's CEL budget: held, and said."""

import pytest
from compose_model_deployment.fn import FunctionRunner

from modelplane.scheduling import decision_budget, selectors
from modelplane_cli.testing import as_dict, request, run

from .objects import A0, B0, FLEET, deployment, observed_in_namespace, replica


def _costly(tag: str) -> str:
    """Holds on every device; 999,991 cost units, just under the per-expression limit."""
    expression = f'device.driver != "{tag}"'
    for level, size in enumerate((10, 10, 10, 10, 30)):
        items = ", ".join(str(i) for i in range(size))
        expression = f"[{items}].all(v{level}, {expression})"
    return expression


def test_a_decision_over_budget_keeps_running_replicas_and_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Time stands still for the decision, so only its count of units can stop it.
    monkeypatch.setattr(selectors, "decision_budget", lambda: decision_budget(lambda: 0.0))
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    hostile = deployment(3)
    devices = hostile["spec"]["nodeSelector"]["devices"]
    devices[0]["selectors"] = [{"cel": _costly("first")}, {"cel": _costly("second")}]
    req = request(
        hostile,
        required={"inferenceclusters": FLEET, "modelreplicas": list(running.values())},
        observed=running,
    )
    got = as_dict(run(FunctionRunner(), req))

    assert sorted(got["desired"]["resources"]) == [A0, B0]
    for name, obj in running.items():
        assert got["desired"]["resources"][name]["resource"]["spec"] == obj["spec"]
    scheduled = got["conditions"][0]
    where = (
        "the scheduling decision's CEL budget of 1,000,000 cost units (1,000,000 spent) ran "
        f"out evaluating selector {_costly('second')!r} of request 'gpu' on device gpu, "
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
