"""A ModelEndpoint: one serving replica's URL, checked and reported.

An endpoint composes nothing. What routes to the replica is composed where it
runs: on its cluster by the ModelReplica (its Service, and with a Gateway its
InferencePool and HTTPRoute), and on a hub by each ModelService that names its
deployment. The endpoint is the record between them, so its function only checks
what the schema cannot: that the ModelDeployment it names composed it (a
ModelService routes only to endpoints its deployments composed) and that its URL
is one a gateway can send to. `Valid` says so.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelEndpoint

from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.vocabulary import API_VERSION, MODEL_DEPLOYMENT, ConditionType, Reason
from modelplane.traffic.urls import parse_url
from modelplane.xfn import report
from modelplane.xfn.runner import ComposeFunction, observed_composite


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.VALID

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        endpoint = observed_composite(req, ModelEndpoint)
        spec = endpoint.spec
        if spec is None:
            raise InvalidInputError.at("spec", "is required")
        issues: list[Issue] = []
        if not composed_by(endpoint, spec.deploymentName):
            issues.append(
                Issue(
                    "metadata.ownerReferences",
                    f"a ModelEndpoint is routed to only when the ModelDeployment "
                    f"{spec.deploymentName!r} composed it; it is not written by hand",
                    Reason.ENDPOINT_NOT_COMPOSED,
                )
            )
        try:
            url = parse_url(spec.url, "spec.url")
        except InvalidInputError as invalid:
            issues.extend(invalid.issues)
            url = None
        if issues:
            raise InvalidInputError(issues)
        message = (
            f"replica {spec.replicaName} of ModelDeployment {spec.deploymentName} on "
            f"InferenceCluster {spec.clusterName} is reached at {url}"
        )
        report.set_condition(
            rsp, report.Condition(ConditionType.VALID, True, Reason.VALID, message)
        )


def composed_by(endpoint: ModelEndpoint, deployment: str) -> bool:
    """Whether the ModelDeployment `deployment` controls the endpoint (Crossplane sets
    the controller reference on what a composite composes)."""
    owners = endpoint.metadata.ownerReferences if endpoint.metadata else None
    return any(
        owner.controller is True
        and owner.apiVersion == API_VERSION
        and owner.kind == MODEL_DEPLOYMENT
        and owner.name == deployment
        for owner in owners or ()
    )
