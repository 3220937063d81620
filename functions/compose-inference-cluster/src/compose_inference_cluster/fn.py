"""An InferenceCluster: a ProviderConfig to reach it, the pools it offers, its stack.

For `source: EKS | GKE` Modelplane creates the cluster (`provision`), and its
connection Secret stands where an existing cluster's kubeconfig Secret does.
For `source: Existing` the cluster already runs; Modelplane composes the
provider-kubernetes ClusterProviderConfig that reaches it through the kubeconfig
Secret, requires each pool's InferenceClass, and publishes status.gpuPools, the
fleet scheduler's whole view of the cluster. A class that is missing or invalid
is named in a condition; the pools already published stay as they were. A
cluster that cannot be read keeps everything it composed and its published status.

The tenancy block (`tenancy`), the replicas placed on the cluster (`replicas`)
and the serving stack (`stack`: Managed Releases, observed prerequisites,
status.stack, StackReady) are their own modules.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceClass, InferenceCluster
from modelplane_models.inference_cluster import ProviderConfigRef, PublishedPool, Status

from compose_inference_cluster.access import hold_inside, identity, require_identity
from compose_inference_cluster.gateway import compose_gateway
from compose_inference_cluster.health import (
    drop_unreadable_reachability,
    report_reachable,
    require_replica_objects,
)
from compose_inference_cluster.provision import (
    compose_cloud,
    connection_secret,
    creates,
    protect_from_replicas,
    protect_from_stack,
)
from compose_inference_cluster.releases import HELM_PROVIDER_CONFIG
from compose_inference_cluster.replicas import placed_replicas, require_replicas
from compose_inference_cluster.stack import StackInputs, compose_stack
from compose_inference_cluster.tenancy import report_tenancy
from modelplane.conventions import parse_scheduling
from modelplane.core.issues import InvalidInputError, Issue, has_errors
from modelplane.core.vocabulary import API_VERSION, INFERENCE_CLASS, ConditionType, Reason
from modelplane.fleet.classes import class_issues
from modelplane.fleet.pools import ClassLookup, PoolView, publish_pools
from modelplane.provisioning import kubernetes_version
from modelplane.xfn import objects, report, required, structs
from modelplane.xfn.memo import BoundedMemo
from modelplane.xfn.runner import (
    ComposeFunction,
    observed_composite,
    observed_resources,
    published,
    set_status,
)

PROVIDER_CONFIG = "provider-config"
SCHEDULING_VALID = report.Condition(
    ConditionType.SCHEDULING_CONFIGURED,
    True,
    Reason.SCHEDULING_VALID,
    "scheduling conventions valid",
)


def scheduling_valid(findings: list[Issue]) -> report.Condition:
    """The condition of a block without errors: a gang API the cluster's version does
    not serve is named on it, since the pods then start ungated."""
    lacking = [str(f) for f in findings if f.reason == Reason.GANG_API_UNAVAILABLE]
    if not lacking:
        return SCHEDULING_VALID
    return report.Condition(
        ConditionType.SCHEDULING_CONFIGURED,
        True,
        Reason.GANG_API_UNAVAILABLE,
        f"{SCHEDULING_VALID.message}; " + "; ".join(lacking),
    )


def class_requirement(class_name: str) -> str:
    return f"inferenceclass-{class_name}"


class FunctionRunner(ComposeFunction):
    validity_condition = ConditionType.POOLS_RESOLVED
    # Not `reachability`: a reconcile held on bad input or a wait observes no Object,
    # and carrying an outage's start through it would date a later outage from the
    # earlier one (unreachable at once); dropped, the grace restarts from the
    # Objects' own times, which can only delay the verdict.
    published_status = tuple(f for f in published(InferenceCluster) if f != "reachability")

    def __init__(self) -> None:
        super().__init__()
        # What `class_issues` found in each InferenceClass read, by the class's bytes
        # (its key in `memos.models`): every cluster's calls read the same few classes,
        # and checking a class parses each device's quantities and versions.
        self.class_checks = BoundedMemo[bytes, tuple[Issue, ...]](1024)

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        drop_unreadable_reachability(req, rsp)
        cluster = observed_composite(req, InferenceCluster)
        name, secret_ref = _identity(cluster)
        require_identity(rsp, cluster, secret_ref["namespace"])

        spec = cluster.spec
        pools = spec.nodePools if spec else []
        class_names = sorted({pool.className for pool in pools})
        for class_name in class_names:
            required.require_named(
                rsp, class_requirement(class_name), API_VERSION, INFERENCE_CLASS, class_name
            )
        # Every requirement, before anything is composed: what follows reads what
        # they fetch, and a call lacking any is never kept (`required.Unfetched`).
        require_replicas(rsp, name)
        require_replica_objects(rsp, name)
        required.stop_unless_fetched(req, rsp)
        # A GCP provider config whose credentials cannot be handed on is named on
        # Provisioned, not the whole response's bad input: the cloud cluster and its
        # pools need no identity and are composed; what does is held (`hold_inside`).
        access = identity(req, cluster, secret_ref["namespace"])
        provider_identity = access.identity
        structs.update(
            rsp.desired.resources[PROVIDER_CONFIG].resource,
            objects.cluster_provider_config(name, secret_ref, identity=provider_identity),
        )
        if PROVIDER_CONFIG in req.observed.resources:
            # A ProviderConfig has no status of its own: it is ready once it exists.
            rsp.desired.resources[PROVIDER_CONFIG].ready = fnv1.READY_TRUE
        lookups = {
            c: self.lookup(required.resolve(req, class_requirement(c), InferenceClass))
            for c in class_names
        }

        cloud = compose_cloud(
            req,
            rsp,
            cluster,
            name,
            {c: lookup.found for c, lookup in lookups.items()},
            provider_identity,
            access.issues,
        )
        previous = (cluster.status.gpuPools if cluster.status else None) or []
        view = publish_pools(cluster, lookups, previous, created=creates(cluster))
        reference = ProviderConfigRef(kind=objects.CLUSTER_PROVIDER_CONFIG_KIND, name=name)
        provider_config = reference.model_dump(mode="json", exclude_none=True)
        # The version a created cluster is composed with is what it runs: published so
        # that whatever renders on it (`kubernetes_version`) follows a refused change's
        # kept version, not the spec. A cloud held on bad input keeps what it published.
        published_version = cluster.status.kubernetesVersion if cluster.status else None
        version = cloud.version if cloud is not None else kubernetes_version(cluster)
        # Published once, after compose_stack has added the stack and capacity: bad
        # input found in between starts the response over (the runner re-publishes
        # the observed status), and nothing here waits, so publishing it earlier too
        # would only be overwritten.
        # Read into their model once: the status publishes them, the stack reads them.
        published = [PublishedPool.model_validate(p) for p in view.pools]
        status = Status(
            gpuPools=published,
            providerConfigRef=reference,
            gateway=compose_gateway(req, rsp, cluster, provider_config, secret_ref["namespace"]),
            kubernetesVersion=cloud.version if cloud is not None else published_version,
        )
        report.report_issues(rsp, ConditionType.POOLS_RESOLVED, view.issues, pools_condition(view))

        scheduling = spec.scheduling if spec and "scheduling" in spec.model_fields_set else None
        config, findings = parse_scheduling(scheduling, version)
        report.report_issues(
            rsp,
            ConditionType.SCHEDULING_CONFIGURED,
            findings,
            scheduling_valid(findings),
            failed_reason=Reason.INVALID_SCHEDULING,
        )

        tenancy = report_tenancy(rsp, cluster, name)
        placed = placed_replicas(req, name, config, tenancy)
        if cloud is not None:
            known = placed.unreadable == 0
            protect_from_replicas(req, rsp, name, cloud, placed.replicas, known)
        # Invalid scheduling keeps every observer composed before (a priority it no
        # longer names may be a typo, not a wish to stop observing).
        observed = observed_resources(req)
        inputs = StackInputs(
            name,
            secret_ref,
            config,
            published,
            placed,
            tenancy is not None,
            observed,
            scheduling_ok=not has_errors(findings),
            ready_nodes=cloud.ready_nodes if cloud is not None else None,
            identity=provider_identity,
            cloud_values=cloud.composed.stack_values if cloud is not None else None,
            nodes_ready=cloud is None or cloud.system_nodes_ready(observed),
        )
        compose_stack(req, rsp, cluster, inputs, status)
        if cloud is not None:
            protect_from_stack(req, rsp, name, cloud)
        if access.held:
            # Last, once everything that goes through the ClusterProviderConfigs (and
            # each Usage naming it) is composed: composed as usual above, so that what
            # was never emitted is left out here in one place.
            hold_inside(req, rsp, name, (PROVIDER_CONFIG, HELM_PROVIDER_CONFIG))
        # Read from the composite as observed, so a start it carries survives even a
        # response that stops early: the runner re-publishes the observed status then.
        connection = cloud.composed.connection if cloud is not None else ""
        reachability = report_reachable(req, rsp, observed, cluster, connection)
        if reachability is not None:
            status.reachability = reachability
        set_status(rsp, status)

    def lookup(self, found: required.Required[InferenceClass]) -> ClassLookup:
        """A class as fetched, with what `class_issues` finds in it kept by its bytes."""
        model = found.first()
        unreadable = found.unreadable[0].issues if found.unreadable else ()
        checked = None
        if model is not None and len(found.digests) == 1:
            # One object fetched and read: the digest is the model's.
            checked = self.class_checks.get_or_make(
                found.digests[0], lambda: tuple(class_issues(model))
            )
        return ClassLookup(model, unreadable, checked)


def _identity(cluster: InferenceCluster) -> tuple[str, dict[str, str]]:
    """The cluster's name and kubeconfig Secret: what its ProviderConfig is made of."""
    problems: list[Issue] = []
    name = (cluster.metadata.name if cluster.metadata else None) or ""
    if not name:
        problems.append(Issue("metadata.name", "is required"))
    source = cluster.spec.cluster if cluster.spec else None
    created = connection_secret(cluster, name) if name else None
    if source is None:
        problems.append(Issue("spec.cluster", "is required"))
    elif created is not None:
        return name, created
    elif source.existing is None:
        problems.append(Issue("spec.cluster.existing", "is required when source is Existing"))
    if problems or source is None or source.existing is None:
        raise InvalidInputError(problems)
    secret = source.existing.secretRef
    return name, {
        "name": secret.name,
        "namespace": secret.namespace,
        "key": secret.key or "kubeconfig",
    }


def pools_condition(view: PoolView) -> report.Condition:
    """PoolsResolved when no class is missing or invalid: every pool published. Every
    class is fetched by then (`required.stop_unless_fetched`), so none is waited for."""
    return report.Condition(
        ConditionType.POOLS_RESOLVED,
        True,
        Reason.CLASSES_RESOLVED,
        f"{len(view.pools)} pools published",
    )
