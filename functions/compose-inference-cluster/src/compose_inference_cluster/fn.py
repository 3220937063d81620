"""An InferenceCluster: a ProviderConfig to reach it, and the pools it offers.

For `source: Existing` the cluster already runs; Modelplane composes the
provider-kubernetes ClusterProviderConfig that reaches it through the kubeconfig
Secret, requires each pool's InferenceClass, and publishes status.gpuPools, the
fleet scheduler's whole view of the cluster. A class that is missing or invalid
is named in a condition; the pools already published stay as they were.
"""

from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.inference_cluster import Scheduling
from pydantic import ValidationError

from modelplane.conventions import parse_scheduling
from modelplane.core.issues import Issue, from_validation_error, has_errors
from modelplane.core.vocabulary import (
    API_VERSION,
    INFERENCE_CLASS,
    POOLS_RESOLVED,
    SCHEDULING_CONFIGURED,
    Reason,
)
from modelplane.fleet.pools import ClassLookup, PoolView, publish_pools
from modelplane.xfn import objects, report, required
from modelplane.xfn.runner import ComposeFunction, observed_composite, observed_resources

PROVIDER_CONFIG = "provider-config"


def class_requirement(class_name: str) -> str:
    return f"inferenceclass-{class_name}"


class FunctionRunner(ComposeFunction):
    validity_condition = POOLS_RESOLVED

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        cluster = observed_composite(req)
        name = cluster["metadata"]["name"]
        spec = cluster.get("spec", {})
        status = cluster.get("status", {})

        secret_ref = spec["cluster"]["existing"]["secretRef"]
        rsp.desired.resources[PROVIDER_CONFIG].resource.update(
            objects.cluster_provider_config(name, secret_ref)
        )
        if PROVIDER_CONFIG in observed_resources(req):
            # A ProviderConfig has no status of its own: it is ready once it exists.
            rsp.desired.resources[PROVIDER_CONFIG].ready = fnv1.READY_TRUE

        lookups: dict[str, ClassLookup] = {}
        for class_name in sorted({pool["className"] for pool in spec.get("nodePools", [])}):
            requirement = class_requirement(class_name)
            required.require_named(rsp, requirement, API_VERSION, INFERENCE_CLASS, class_name)
            found = required.resolve(req, requirement)
            lookups[class_name] = ClassLookup(fetched=found.resolved, obj=found.first())

        view = publish_pools(cluster, lookups, status.get("gpuPools", []))
        rsp.desired.composite.resource.update(
            {
                "status": {
                    "gpuPools": view.pools,
                    "providerConfigRef": {
                        "kind": objects.CLUSTER_PROVIDER_CONFIG_KIND,
                        "name": name,
                    },
                }
            }
        )
        report.set_condition(rsp, pools_condition(view))
        for path, class_name in view.missing:
            report.warning(
                rsp, Reason.CLASS_NOT_FOUND, f"{path}: InferenceClass {class_name!r} not found"
            )
        for path, class_name, why in view.invalid:
            report.warning(
                rsp,
                Reason.CLASS_INVALID,
                f"{path}: InferenceClass {class_name!r} is invalid: {why}",
            )

        try:
            scheduling = Scheduling.model_validate(spec.get("scheduling") or {})
        except ValidationError as error:
            issues = from_validation_error(error, Reason.INVALID_SCHEDULING)
            findings = [issue.under("spec.scheduling") for issue in issues]
        else:
            _, findings = parse_scheduling(scheduling)
        report.set_condition(rsp, scheduling_condition(findings))
        for finding in findings:
            report.warning(rsp, finding.reason, str(finding))


def pools_condition(view: PoolView) -> report.Condition:
    if view.missing or view.invalid:
        parts = [f"{path}: InferenceClass {name!r} not found" for path, name in view.missing]
        parts += [f"{path}: InferenceClass {name!r} is invalid" for path, name, _ in view.invalid]
        reason = Reason.CLASS_NOT_FOUND if view.missing else Reason.CLASS_INVALID
        return report.Condition(POOLS_RESOLVED, False, reason, "; ".join(parts))
    if view.waiting:
        names = ", ".join(view.waiting)
        return report.Condition(
            POOLS_RESOLVED, None, Reason.WAITING_FOR_CLASSES, f"waiting for InferenceClass {names}"
        )
    pools: list[Any] = view.pools
    return report.Condition(
        POOLS_RESOLVED, True, Reason.CLASSES_RESOLVED, f"{len(pools)} pools published"
    )


def scheduling_condition(findings: list[Issue]) -> report.Condition:
    """Whether replicas can be rendered against this cluster's scheduling block.

    Errors block rendering (each replica keeps what it runs); warnings do not,
    so the condition stays True and the warnings are events.
    """
    if has_errors(findings):
        errors = [str(f) for f in findings if f.is_error]
        return report.Condition(
            SCHEDULING_CONFIGURED, False, Reason.INVALID_SCHEDULING, "; ".join(errors)
        )
    message = "scheduling conventions valid"
    if findings:
        message += f" with {len(findings)} warning{'s' if len(findings) != 1 else ''}"
    return report.Condition(SCHEDULING_CONFIGURED, True, Reason.SCHEDULING_VALID, message)
