"""An InferenceClass composes nothing; this function only judges it.

The verdict is the Valid condition, plus one Warning event per problem naming
its field, so `kubectl describe` shows exactly what to fix.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceClass

from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.fleet.classes import class_issues
from modelplane.xfn import report
from modelplane.xfn.runner import ComposeFunction, observed_composite

ALL_VALID = report.Condition(ConditionType.VALID, True, Reason.VALID, "every device parses")


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.VALID

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        issues = class_issues(observed_composite(req, InferenceClass))
        report.report_issues(rsp, ConditionType.VALID, issues, ALL_VALID)
