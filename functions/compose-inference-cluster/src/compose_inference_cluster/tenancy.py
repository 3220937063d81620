"""The cluster's tenancy block: TenancyConfigured, and the tenancy the stack may use.

`spec.tenancy` is read by `modelplane.conventions.tenancy` (the one home of tenant
namespaces, which the renderer uses too). Its problems are one condition and one
Warning event each; with errors, nothing that depends on a tenant namespace (a
Kueue LocalQueue to observe) is named, and what was observed before is kept.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster

from modelplane.conventions.tenancy import Tenancy, read_tenancy
from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.xfn import report

TENANCY_VALID = report.Condition(
    ConditionType.TENANCY_CONFIGURED,
    True,
    Reason.TENANCY_VALID,
    "tenant namespaces and their metadata valid",
)


def report_tenancy(
    rsp: fnv1.RunFunctionResponse, cluster: InferenceCluster, name: str
) -> Tenancy | None:
    """Set TenancyConfigured; the tenancy when it is valid, else None."""
    tenancy, issues = read_tenancy(cluster.spec.tenancy if cluster.spec else None, name)
    valid = report.report_issues(
        rsp,
        ConditionType.TENANCY_CONFIGURED,
        issues,
        TENANCY_VALID,
        failed_reason=Reason.INVALID_TENANCY,
    )
    return tenancy if valid else None
