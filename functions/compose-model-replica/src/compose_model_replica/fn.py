"""One placed replica, rendered onto its cluster.

Fetch the replica's InferenceCluster (and, for KAI, the PriorityClasses that
tell preemptible work from non-preemptible), render the workloads, apply the
cluster's scheduler conventions, and compose each remote object as a
provider-kubernetes Object. Whenever the replica cannot be rendered (its cluster
is gone or not connected, its pool is unknown, a platform template is broken)
it says so on the Accepted condition and keeps every Object it composed before:
a running model is never taken down by bad input.
"""

from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.inference_cluster import InferenceCluster
from modelplane_models.model_replica import ModelReplica

from compose_model_replica.remote import remote_observed, with_conventions, wrap_all
from modelplane.conventions import (
    SchedulingConfig,
    TemplateContext,
    apply_conventions,
    parse_scheduling,
)
from modelplane.core.conditions import find_condition
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.vocabulary import (
    ACCEPTED,
    API_VERSION,
    INFERENCE_CLUSTER,
    LABEL_ROLE,
    MODEL_DEPLOYMENT,
    SERVING,
    Reason,
)
from modelplane.workloads import (
    RemoteObject,
    ReplicaInput,
    cluster_input,
    render_replica,
    replica_input,
    replica_status,
    workload_status,
)
from modelplane.xfn import objects, report, required
from modelplane.xfn.runner import (
    ComposeFunction,
    keep_observed,
    observed_composite,
    observed_resources,
)

CLUSTER = "inferencecluster"
PRIORITY_CLASSES = "priorityclasses"


class WaitingError(Exception):
    """A required resource is not fetched yet: keep what runs and say what is awaited."""


class FunctionRunner(ComposeFunction):
    validity_condition = ACCEPTED

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        replica = observed_composite(req, ModelReplica)
        parsed = replica_input(replica)
        try:
            self.render(req, rsp, replica, parsed)
        except WaitingError as waiting:
            keep_observed(req, rsp)
            report.set_condition(
                rsp,
                report.Condition(ACCEPTED, None, Reason.WAITING_FOR_RESOURCES, str(waiting)),
            )

    def render(
        self,
        req: fnv1.RunFunctionRequest,
        rsp: fnv1.RunFunctionResponse,
        replica: ModelReplica,
        parsed: ReplicaInput,
    ) -> None:
        if not controlled_by_its_deployment(replica, parsed.deployment_name):
            # Placement, capacity and the priority allow-list are decided by the
            # fleet scheduler; a replica written by hand would skip all three.
            raise InvalidInputError.at(
                "metadata.ownerReferences",
                "a ModelReplica is rendered only when the "
                f"ModelDeployment {parsed.deployment_name!r} controls it; "
                "create ModelDeployments, not ModelReplicas",
                Reason.NOT_COMPOSED,
            )
        cluster = self.cluster(req, rsp, parsed.cluster_name)
        provider_config = cluster.status.providerConfigRef if cluster.status else None
        if provider_config is None or not provider_config.name:
            raise InvalidInputError.at(
                "",
                f"InferenceCluster {parsed.cluster_name!r} has no status.providerConfigRef yet",
                Reason.CLUSTER_NOT_CONNECTED,
            )

        config, _ = parse_scheduling(cluster.spec.scheduling if cluster.spec else None)
        priority_classes = self.priority_classes(req, rsp, config)
        rendered = render_replica(parsed, cluster_input(cluster))

        context = TemplateContext(
            namespace=parsed.namespace,
            name=parsed.deployment_name,
            replica=parsed.name,
            cluster=parsed.cluster_name,
            priority=parsed.priority,
        )
        workloads = [o.manifest for o in rendered if o.is_workload]
        result = apply_conventions(workloads, config, context, priority_classes=priority_classes)
        if not result.ok:
            raise InvalidInputError(result.issues)
        for issue in result.issues:
            report.warning(rsp, issue.reason, str(issue))

        remote = with_conventions(rendered, result.workloads, result.extra)
        observed = observed_resources(req)
        for key, wrapped in wrap_all(
            remote, parsed, provider_config.model_dump(exclude_none=True)
        ).items():
            desired = rsp.desired.resources[key]
            desired.resource.update(wrapped)
            desired.ready = (
                fnv1.READY_TRUE if objects.is_ready(observed.get(key)) else fnv1.READY_FALSE
            )

        seen = {o.key: remote_observed(observed.get(o.key)) for o in remote}
        workloads_status = [
            {
                "role": o.manifest.get("metadata", {}).get("labels", {}).get(LABEL_ROLE, ""),
                "kind": o.manifest["kind"],
                "name": o.manifest["metadata"]["name"],
                "available": workload_status(o.manifest["kind"], seen[o.key])[0],
            }
            for o in remote
            if o.is_workload
        ]
        namespace = next(
            (o.manifest["metadata"]["name"] for o in remote if o.manifest["kind"] == "Namespace"),
            "",
        )
        rsp.desired.composite.resource.update(
            {"status": {"namespace": namespace, "workloads": workloads_status}}
        )
        report.set_condition(
            rsp, accepted_condition(remote_keys(remote), observed, parsed.cluster_name)
        )
        serving, why = replica_status(remote, seen)
        reason = Reason.WORKLOAD_AVAILABLE if serving else Reason.WORKLOAD_NOT_AVAILABLE
        report.set_condition(rsp, report.Condition(SERVING, serving, reason, why))

    def cluster(
        self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, name: str
    ) -> InferenceCluster:
        """The replica's InferenceCluster, read into its model."""
        required.require_named(rsp, CLUSTER, API_VERSION, INFERENCE_CLUSTER, name)
        found = required.resolve(req, CLUSTER, InferenceCluster)
        if not found.resolved:
            raise WaitingError(f"waiting for InferenceCluster {name}")
        cluster = found.first()
        if cluster is not None:
            return cluster
        if found.unreadable:
            raise InvalidInputError(
                [
                    Issue("spec.clusterName", f"InferenceCluster {name!r} is invalid: {issue}")
                    for unreadable in found.unreadable
                    for issue in unreadable.issues
                ]
            )
        raise InvalidInputError.at(
            "spec.clusterName", f"InferenceCluster {name!r} not found", Reason.CLUSTER_NOT_FOUND
        )

    def priority_classes(
        self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, config: SchedulingConfig
    ) -> list[dict[str, Any]]:
        """PriorityClasses, for schedulers whose rules weigh priorities by value (KAI)."""
        if not config.scheduler.reads_priority_classes:
            return []
        required.require_all(rsp, PRIORITY_CLASSES, "scheduling.k8s.io/v1", "PriorityClass")
        found = required.resolve(req, PRIORITY_CLASSES)
        if not found.resolved:
            raise WaitingError("waiting for PriorityClasses")
        return found.items


def controlled_by_its_deployment(replica: ModelReplica, deployment: str) -> bool:
    owners = replica.metadata.ownerReferences if replica.metadata else None
    return any(
        owner.controller is True
        and owner.apiVersion == API_VERSION
        and owner.kind == MODEL_DEPLOYMENT
        and owner.name == deployment
        for owner in owners or ()
    )


def remote_keys(remote: list[RemoteObject]) -> list[str]:
    return [o.key for o in remote]


def accepted_condition(
    keys: list[str], observed: dict[str, dict[str, Any]], cluster: str
) -> report.Condition:
    """Whether the cluster took every object: each Object's own Synced condition.

    provider-kubernetes sets Synced=False with the API server's answer when an
    apply is refused (a webhook, a quota, a missing CRD), so that message is the
    most useful thing to show.
    """
    refused = [
        f"{key}: {synced.get('message', synced.get('reason', 'not synced'))}"
        for key in keys
        if (synced := find_condition(observed.get(key), "Synced")) is not None
        and synced.get("status") == "False"
    ]
    if refused:
        return report.Condition(ACCEPTED, False, Reason.WORKLOAD_REJECTED, "; ".join(refused))
    applied = [key for key in keys if objects.is_synced(observed.get(key))]
    if len(applied) == len(keys):
        return report.Condition(
            ACCEPTED,
            True,
            Reason.WORKLOAD_APPLIED,
            f"{len(keys)} objects applied to InferenceCluster {cluster}",
        )
    waiting = len(keys) - len(applied)
    return report.Condition(
        ACCEPTED,
        None,
        Reason.WORKLOAD_COMPOSED,
        f"{waiting} of {len(keys)} objects not yet applied to InferenceCluster {cluster}",
    )
