"""The `Healthy` condition: whether Modelplane still reaches the workload cluster.

The probes are the provider-kubernetes Objects this cluster composed (its
prerequisite observers, its gateway): they go through the same ProviderConfig
as every replica's Objects. `fleet.health.assess` reads them against now
(`xfn.clock`: fixed by the render engine, the wall clock in a control plane).
A cluster that is not Healthy is treated by the fleet scheduler as tainted
NoExecute: its replicas are replaced elsewhere, make-before-break.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.vocabulary import HEALTHY, Reason
from modelplane.fleet.health import assess
from modelplane.xfn import clock, objects, report


def _is_object(obj: dict[str, Any]) -> bool:
    return obj.get("apiVersion") == objects.OBJECT_API_VERSION and obj.get("kind") == "Object"


def report_health(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    observed: dict[str, dict[str, Any]],
) -> None:
    """Set `Healthy` from the observed Objects this cluster composed."""
    probes = [obj for _, obj in sorted(observed.items()) if _is_object(obj)]
    health = assess(probes, clock.now(req))
    reason = {
        True: Reason.CLUSTER_HEALTHY,
        None: Reason.SYNC_FAILING,
        False: Reason.CLUSTER_UNREACHABLE,
    }[health.healthy]
    report.set_condition(rsp, report.Condition(HEALTHY, health.healthy, reason, health.message))
