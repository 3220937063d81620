"""An InferenceClass composes nothing; this function only judges it.

The verdict is the Valid condition, plus one Warning event per problem naming
its field, so `kubectl describe` shows exactly what to fix.
"""

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.vocabulary import VALID, Reason
from modelplane.fleet.classes import class_problems
from modelplane.xfn import report
from modelplane.xfn.runner import ComposeFunction, observed_composite


class FunctionRunner(ComposeFunction):
    validity_condition = VALID

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        problems = class_problems(observed_composite(req))
        if problems:
            for problem in problems:
                report.warning(rsp, Reason.INVALID_SPEC, str(problem))
            summary = "; ".join(map(str, problems))
            report.set_condition(rsp, report.Condition(VALID, False, Reason.INVALID_SPEC, summary))
            return
        report.set_condition(
            rsp, report.Condition(VALID, True, Reason.VALID, "every device parses")
        )
