"""A call lacking a key it requires answers its requirements and context only.

Crossplane's fetch loop never keeps such a call (design/required-resources.md), so
each function that requires resources answers it with the SDK's empty answer plus
its requirements, and the loop then settles on the very answer the function gives
its steady-state request: the requirements of the short call lead to the same
final answer, and for a function whose requirements depend on nothing fetched
they are those of the full call.
"""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner as ClusterFunction
from compose_inference_gateway.fn import FunctionRunner as GatewayFunction
from compose_model_cache.fn import FunctionRunner as CacheFunction
from compose_model_deployment.fn import FunctionRunner as DeploymentFunction
from compose_model_replica.fn import FunctionRunner as ReplicaFunction
from compose_model_service.fn import FunctionRunner as ServiceFunction
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn import required
from modelplane_dev.fuzz import final_response, requests_for, run_function
from modelplane_dev.testing import as_dict

# function, its runner, the examples it is sent, whether its requirements depend
# on what was fetched (then the first call may ask for less than the full one:
# KAI PriorityClasses once the cluster is read, a gateway's hub cluster).
CASES: list[tuple[str, Any, tuple[str, ...], bool]] = [
    ("modelplane-compose-inference-cluster", ClusterFunction, ("catalog", "fleet"), False),
    ("modelplane-compose-model-deployment", DeploymentFunction, ("catalog", "fleet"), True),
    ("modelplane-compose-model-replica", ReplicaFunction, ("catalog", "fleet"), True),
    ("modelplane-compose-inference-gateway", GatewayFunction, ("catalog", "serving"), False),
    ("modelplane-compose-model-service", ServiceFunction, ("catalog", "serving"), True),
    ("modelplane-compose-model-cache", CacheFunction, ("catalog", "caching"), False),
]
IDS = [case[0].removeprefix("modelplane-") for case in CASES]


def first_call(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    """`req` as the first call of a reconcile sends it: nothing fetched yet."""
    first = fnv1.RunFunctionRequest()
    first.CopyFrom(req)
    first.ClearField("required_resources")
    return first


def requirements_of(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    return as_dict(rsp).get("requirements", {})


@pytest.mark.parametrize(("function", "runner", "fleets", "grows"), CASES, ids=IDS)
def test_a_first_call_answers_its_requirements_and_context_only(
    function: str, runner: Any, fleets: tuple[str, ...], grows: bool
) -> None:
    requests = requests_for(function, fleets)
    assert requests
    for req in requests:
        first = first_call(req)
        got = as_dict(run_function(runner(), first))
        full = run_function(runner(), req)
        asked = requirements_of(full) if not grows else got["requirements"]
        expected: dict[str, Any] = {
            "meta": {"tag": req.meta.tag, "ttl": "60s"},
            "requirements": asked,
        }
        if req.HasField("context"):
            expected["context"] = as_dict(fnv1.RunFunctionResponse(context=req.context))["context"]
        if req.HasField("desired"):
            expected["desired"] = as_dict(fnv1.RunFunctionResponse(desired=req.desired))["desired"]
        assert got == expected
        # It asked for something it was not sent: Crossplane calls again.
        assert required.unfetched(first, run_function(runner(), first))


@pytest.mark.parametrize(("function", "runner", "fleets", "grows"), CASES, ids=IDS)
def test_the_fetch_loop_settles_on_the_steady_state_answer(
    function: str, runner: Any, fleets: tuple[str, ...], grows: bool
) -> None:
    """From the first call, the requirements it answers lead Crossplane's loop to
    the same answer the steady-state request gets (whole response)."""
    for req in requests_for(function, fleets):
        want = as_dict(run_function(runner(), req))
        got = as_dict(final_response(runner(), first_call(req), world=req))
        assert got == want
