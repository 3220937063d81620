"""One placed replica, rendered onto its cluster.

Fetch the replica's InferenceCluster (and, for KAI, the PriorityClasses that
tell preemptible work from non-preemptible), render the workloads, apply the
cluster's scheduler conventions, and compose each remote object as a
provider-kubernetes Object. Whenever the replica cannot be rendered (its cluster
is gone or not connected, its pool is unknown, a platform template is broken)
it says so on the Accepted condition and keeps every Object it composed before:
a running model is never taken down by bad input.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from dataclasses import replace
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.inference_cluster import InferenceCluster
from modelplane_models.model_replica import ModelReplica

from compose_model_replica.cache import require_cache, with_cache
from compose_model_replica.capacity import waiting_for_capacity
from compose_model_replica.remote import (
    remote_objects,
    remote_observed,
    route_verdict,
    wrap_all,
)
from compose_model_replica.stack import lacking
from compose_model_replica.status import (
    accepted_condition,
    composite_status,
    lacking_condition,
    serving_condition,
    unapplied,
    unreachable_condition,
    verdicts,
)
from modelplane.conventions import (
    SchedulingConfig,
    TemplateContext,
    apply_conventions,
    parse_scheduling,
)
from modelplane.core.applied import stamped
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.observed import conditions, first_condition
from modelplane.core.refs import PRIORITY_CLASS_API_VERSION, PRIORITY_CLASS_KIND
from modelplane.core.vocabulary import (
    ANNOTATION_REVISION,
    API_VERSION,
    INFERENCE_CLUSTER,
    MODEL_DEPLOYMENT,
    ConditionType,
    Reason,
)
from modelplane.provisioning import kubernetes_version
from modelplane.workloads import (
    ReplicaInput,
    cluster_input,
    render_replica,
    replica_input,
)
from modelplane.xfn import report, required, structs
from modelplane.xfn.runner import (
    ComposeFunction,
    keep_observed,
    observed_composite,
    observed_resources,
    published,
    set_status,
)

CLUSTER = "inferencecluster"
PRIORITY_CLASSES = "priorityclasses"


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.ACCEPTED
    # What runs, and where it is reached, stay published while the replica is refused:
    # a ModelEndpoint, and every route to it, follow status.url.
    published_status = published(ModelReplica)

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        composite = observed_composite(req, ModelReplica)
        replica = replica_input(composite)
        self.render(req, rsp, composite, replica)

    def render(
        self,
        req: fnv1.RunFunctionRequest,
        rsp: fnv1.RunFunctionResponse,
        composite: ModelReplica,
        replica: ReplicaInput,
    ) -> None:
        if not controlled_by_its_deployment(composite, replica.deployment_name):
            # Placement, capacity and the priority allow-list are decided by the
            # fleet scheduler; a replica written by hand would skip all three.
            raise InvalidInputError.at(
                "metadata.ownerReferences",
                "a ModelReplica is rendered only when the "
                f"ModelDeployment {replica.deployment_name!r} controls it; "
                "create ModelDeployments, not ModelReplicas",
                Reason.NOT_COMPOSED,
            )
        require_cache(rsp, composite, replica.namespace)
        cluster = self.cluster(req, rsp, replica.cluster_name)
        cached = with_cache(req, composite, replica)
        replica = cached.replica
        provider_config = cluster.status.providerConfigRef if cluster.status else None
        if provider_config is None or not provider_config.name:
            raise InvalidInputError.at(
                "",
                f"InferenceCluster {replica.cluster_name!r} has no status.providerConfigRef yet",
                Reason.CLUSTER_NOT_CONNECTED,
            )

        spec = cluster.spec
        config, _ = parse_scheduling(spec.scheduling if spec else None, kubernetes_version(cluster))
        priority_classes = self.priority_classes(req, rsp, config)
        rendered = render_replica(replica, cluster_input(cluster))

        context = TemplateContext(
            namespace=replica.namespace,
            name=replica.deployment_name,
            replica=replica.name,
            cluster=replica.cluster_name,
            priority=replica.priority,
        )
        observed = observed_resources(req)
        # What the cluster holds of each workload: a scheduler keeps there the labels it
        # refuses to change on a running workload (Kueue's queue and priority).
        running = {w.key: remote_observed(observed.get(w.key)) for w in rendered.workloads}
        conventions = apply_conventions(
            rendered.workloads,
            config,
            context,
            priority_classes=priority_classes,
            running=running,
        )
        if not conventions.ok:
            raise InvalidInputError(conventions.issues)
        for issue in conventions.issues:
            report.warning(rsp, issue.reason, str(issue))

        # The workloads as the conventions handed them back, under their own keys, each
        # stamped with a digest of itself: its read-back carries it once applied.
        handed = replace(
            rendered,
            workloads=tuple(
                replace(w, manifest=stamped(w.manifest)) for w in conventions.workloads
            ),
        )
        remote = remote_objects(handed, conventions.gangs)
        reference = provider_config.model_dump(exclude_none=True)
        composed = wrap_all(remote, replica, reference)
        workload_keys = {w.key for w in handed.workloads}
        if cached.waiting is not None:
            # Until the cache is Ready here, a workload is not created, and one that runs
            # keeps the spec it runs with (`cache`).
            composed = {k: v for k, v in composed.items() if k not in workload_keys}
            keep_observed(req, rsp, workload_keys & set(observed))
        keys = [o.key for o in remote if o.key in composed or o.key in observed]
        # Each Object's conditions read once, for Ready here and Synced in Accepted.
        said = {key: conditions(observed.get(key)) for key in {*composed, *keys}}
        for key, wrapped in composed.items():
            desired = rsp.desired.resources[key]
            structs.update(desired.resource, wrapped)
            ready = first_condition(said[key], "Ready")
            desired.ready = (
                fnv1.READY_TRUE
                if ready is not None and ready.status == "True"
                else fnv1.READY_FALSE
            )

        seen = {w.key: remote_observed(observed.get(w.key)) for w in handed.workloads}
        served = verdicts(handed, seen)
        report.set_condition(rsp, accepted_condition(keys, said, replica.cluster_name))
        missing = lacking(cluster, replica, handed, conventions.gangs, config, context)
        changed = unapplied(
            {k: composed[k] for k in workload_keys if k in composed}, observed, seen
        )
        verdict = (
            lacking_condition(replica.cluster_name, missing)
            or cached.waiting
            or waiting_for_capacity(
                serving_condition(handed, served, changed, route_verdict(remote, observed)),
                cluster,
                replica,
            )
        )
        report.set_condition(rsp, unreachable_condition(cluster, verdict) or verdict)
        # Crossplane v2.3 writes a composite's status and the function's conditions in
        # two writes (composition_functions.go's status patch, then reconciler.go's
        # Status().Update), so a deployment can read this status beside the condition
        # of the reconcile before. The revision is published only with a True verdict,
        # so a stale Serving=True never reads as current (`verdict_current`); on an
        # unreachable cluster, with the verdict as last read beside Serving=Unknown.
        judged = revision_of(composite) if verdict.status is True else ""
        set_status(rsp, composite_status(handed, served, judged))

    def cluster(
        self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, name: str
    ) -> InferenceCluster:
        """The replica's InferenceCluster, read into its model once it and the cache
        (`require_cache`) are fetched."""
        required.require_named(rsp, CLUSTER, API_VERSION, INFERENCE_CLUSTER, name)
        required.stop_unless_fetched(req, rsp)
        found = required.resolve(req, CLUSTER, InferenceCluster)
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
        required.require_all(rsp, PRIORITY_CLASSES, PRIORITY_CLASS_API_VERSION, PRIORITY_CLASS_KIND)
        required.stop_unless_fetched(req, rsp)
        return required.resolve(req, PRIORITY_CLASSES).items


def revision_of(replica: ModelReplica) -> str | None:
    """The deployment revision the replica carries (its `modelplane.ai/revision`)."""
    annotations = replica.metadata.annotations if replica.metadata else None
    return (annotations or {}).get(ANNOTATION_REVISION)


def controlled_by_its_deployment(replica: ModelReplica, deployment: str) -> bool:
    owners = replica.metadata.ownerReferences if replica.metadata else None
    return any(
        owner.controller is True
        and owner.apiVersion == API_VERSION
        and owner.kind == MODEL_DEPLOYMENT
        and owner.name == deployment
        for owner in owners or ()
    )
