"""A cluster Modelplane creates: compose its cloud resources, order their deletion,
and read back what the cloud reports.

The cloud is the provisioner `spec.cluster.source` names (`modelplane.provisioning`);
nothing here names a cloud. Its managed resources live in the system namespace,
and its connection Secret is the kubeconfig every ProviderConfig reads, so the
stack, the gateway and the replicas reach a created cluster as an existing one.

- Bad input (a pool whose class cannot be built, sizes out of range) is named
  on `Provisioned`, and whatever was composed for that pool is re-emitted as it
  is: Crossplane deletes what a function stops emitting.
- What the cloud applies inside the cluster (a Helm Release through provider-helm,
  an Object through provider-kubernetes) reaches it through the cluster's
  ClusterProviderConfigs, like the stack's.
- Usages (`protection.crossplane.io/v1beta1`, `replayDeletion`) order deletion:
  the network by the cloud cluster, the cloud cluster by each node group, the cloud
  cluster and its kubeconfig writer by each Release and Object inside it, and by
  each ModelReplica placed here, so a deleted InferenceCluster loses its replicas'
  workloads first, then its node groups, then the cluster, then the network. An
  edit deletes only what it removes (a pool taken out of nodePools).
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceClass, InferenceCluster

from compose_inference_cluster.gateway import GATEWAY_KEY
from compose_inference_cluster.releases import HELM_PROVIDER_CONFIG, RELEASE_PREFIX
from compose_inference_cluster.replicas import PlacedReplica
from modelplane.core.issues import Issue
from modelplane.core.naming import hashed_name
from modelplane.core.refs import USAGE_API_VERSION, ObjectRef
from modelplane.core.vocabulary import API_VERSION, MODEL_REPLICA, ConditionType, Reason
from modelplane.provisioning import (
    ClusterPlan,
    Composed,
    PoolPlan,
    Provisioner,
    check_pools,
    provisioner_for,
)
from modelplane.provisioning.versions import planned_version
from modelplane.traffic.names import SYSTEM_NAMESPACE
from modelplane.xfn import objects, report, structs
from modelplane.xfn.runner import keep_observed, observed_resources

CLOUD_USAGE_PREFIX: Final = "usage-cloud-"
REPLICA_CLOUD_USAGE_PREFIX: Final = "usage-cloud-replica-"
DEFAULT_VERSION: Final = "1.34"


@dataclass
class Cloud:
    """What was composed for a created cluster, and the nodes each pool has ready."""

    provisioner: Provisioner
    composed: Composed
    # The Kubernetes version composed (`planned_version`): what the cluster runs, or
    # is being upgraded to, and what everything rendered on it is rendered for.
    version: str
    ready_nodes: dict[str, int] = field(default_factory=dict[str, int])

    def system_nodes_ready(self, observed: Mapping[str, Any]) -> bool:
        """Whether the provisioner's own node groups (where the stack's controllers
        run) report Ready: before that the cluster has no node for a chart's pods."""
        return all(objects.is_ready(observed.get(key)) for key in self.composed.system_pools)


def source_of(cluster: InferenceCluster) -> str:
    source = cluster.spec.cluster if cluster.spec else None
    return str(source.source) if source is not None else ""


def creates(cluster: InferenceCluster) -> bool:
    """Whether Modelplane creates the cluster (a provisioner serves its source)."""
    return provisioner_for(source_of(cluster)) is not None


def connection_secret(cluster: InferenceCluster, name: str) -> dict[str, str] | None:
    """The kubeconfig Secret of a created cluster; None for an existing one."""
    provisioner = provisioner_for(source_of(cluster))
    if provisioner is None:
        return None
    return provisioner.connection_secret(name, SYSTEM_NAMESPACE)


def _ref(ref: ObjectRef, namespaced: bool = True) -> dict[str, Any]:
    resource: dict[str, str] = {"name": ref.name}
    if namespaced:
        resource["namespace"] = ref.namespace
    return {"apiVersion": ref.api_version, "kind": ref.kind, "resourceRef": resource}


def _usage(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    key: str,
    name: str,
    namespace: str,
    of: dict[str, Any],
    by: dict[str, Any],
) -> None:
    structs.update(
        rsp.desired.resources[key].resource,
        {
            "apiVersion": USAGE_API_VERSION,
            "kind": "Usage",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"of": of, "by": by, "replayDeletion": True},
        },
    )
    if key in observed:
        # A Usage has no readiness of its own: created is ready.
        rsp.desired.resources[key].ready = fnv1.READY_TRUE


def _usage_key(of_key: str, by_key: str) -> str:
    return f"{CLOUD_USAGE_PREFIX}{of_key}-by-{by_key}"


def _observed_ref(observed: Mapping[str, Any]) -> ObjectRef:
    meta: Mapping[str, Any] = observed.get("metadata") or {}
    return ObjectRef(
        str(observed.get("apiVersion", "")),
        str(observed.get("kind", "")),
        str(meta.get("name", "")),
        str(meta.get("namespace", "")),
    )


def _order(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    name: str,
    composed: Composed,
    kept_pools: Mapping[str, ObjectRef],
) -> None:
    """The network and the identities outlive the cloud cluster, which outlives its node
    groups (the pools' composed and kept as they are, and the provisioner's own)."""
    refs = {key: composed.ref(key) for key in composed.resources}
    refs.update(kept_pools)
    edges = [(key, composed.cluster) for key in (*composed.network, *composed.identities)]
    pools = sorted({*composed.pools.values(), *kept_pools, *composed.system_pools})
    edges += [(composed.cluster, key) for key in pools]
    # What runs inside the cluster is uninstalled while the cluster can be reached.
    reach = sorted({composed.cluster, composed.connection} - {""})
    edges += [(of, key) for key in (*composed.inside, *composed.objects) for of in reach]
    for of_key, by_key in edges:
        _cloud_usage(rsp, observed, name, of_key, refs[of_key], by_key, refs[by_key])


def _cloud_usage(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    name: str,
    of_key: str,
    of: ObjectRef,
    by_key: str,
    by: ObjectRef,
) -> None:
    """A Usage keeping composed resource `of_key` while `by_key` exists, beside them
    (both in the cluster's namespace)."""
    _usage(
        rsp,
        observed,
        _usage_key(of_key, by_key),
        hashed_name(f"{name}-cloud", name, of_key, by_key),
        of.namespace,
        _ref(of, namespaced=False),
        _ref(by, namespaced=False),
    )


def protect_from_replicas(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    name: str,
    cloud: Cloud,
    replicas: Sequence[PlacedReplica],
    known: bool,
) -> None:
    """Each placed replica keeps the cloud cluster, and what writes its kubeconfig,
    until its workloads are gone. While some replicas cannot be read (`known` is
    False) every such Usage composed before is kept."""
    observed = observed_resources(req)
    protected = sorted({cloud.composed.cluster, cloud.composed.connection} - {""})
    for replica in replicas:
        for key in protected:
            of = cloud.composed.ref(key)
            _usage(
                rsp,
                observed,
                f"{REPLICA_CLOUD_USAGE_PREFIX}{key}-{replica.namespace}-{replica.name}",
                hashed_name(f"{name}-cloud", name, key, replica.namespace, replica.name),
                replica.namespace,
                _ref(of),
                {
                    "apiVersion": API_VERSION,
                    "kind": MODEL_REPLICA,
                    "resourceRef": {"name": replica.name},
                },
            )
    if not known:
        keep_observed(req, rsp, {k for k in observed if k.startswith(REPLICA_CLOUD_USAGE_PREFIX)})


def protect_from_stack(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, name: str, cloud: Cloud
) -> None:
    """Each Release of the serving stack, and the cluster's Gateway Object, keeps the
    cloud cluster, and what writes its kubeconfig, until it is gone: provider-helm and
    provider-kubernetes reach the cluster through that kubeconfig to delete what they
    made, and one whose cluster went first stays Terminating. The Gateway's Service is
    a cloud load balancer in the cluster's network: deleted after the cluster, it is
    orphaned and holds the network's deletion up for good. As `_order` keeps them for
    what the cloud itself installs."""
    observed = observed_resources(req)
    protected = sorted({cloud.composed.cluster, cloud.composed.connection} - {""})
    users = sorted(k for k in rsp.desired.resources if k.startswith(RELEASE_PREFIX))
    users += [GATEWAY_KEY] if GATEWAY_KEY in rsp.desired.resources else []
    for by_key in users:
        user = structs.pick(
            rsp.desired.resources[by_key].resource,
            ("apiVersion",),
            ("kind",),
            ("metadata", "name"),
        )
        meta: Mapping[str, Any] = user.get("metadata") or {}
        by = ObjectRef(
            str(user.get("apiVersion", "")),
            str(user.get("kind", "")),
            str(meta.get("name", "")),
        )
        for of_key in protected:
            _cloud_usage(rsp, observed, name, of_key, cloud.composed.ref(of_key), by_key, by)


def compose_cloud(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    cluster: InferenceCluster,
    name: str,
    classes: Mapping[str, InferenceClass | None],
    identity: Mapping[str, Any] | None = None,
    access_issues: Sequence[Issue] = (),
) -> Cloud | None:
    """Compose a created cluster's cloud resources and set `Provisioned`; None for an
    existing cluster. `identity` is what its ClusterProviderConfigs authenticate with
    besides the kubeconfig, `access_issues` what keeps it from being made (`access`):
    named on `Provisioned`, though nothing here needs the identity."""
    provisioner = provisioner_for(source_of(cluster))
    if provisioner is None:
        return None
    observed = observed_resources(req)
    block_issues = provisioner.block_issues(cluster)
    if block_issues:
        issues = [*block_issues, *access_issues]
        keep_observed(req, rsp, {k for k in observed if provisioner.owns(k)})
        for issue in issues:
            report.warning(rsp, issue.reason, str(issue))
        message = "; ".join(map(str, issues))
        report.set_condition(
            rsp,
            report.Condition(
                ConditionType.PROVISIONED, False, Reason.INVALID_PROVISIONING, message
            ),
        )
        return None
    spec = cluster.spec
    assert spec is not None  # block_issues reports a cluster without one
    check = check_pools(provisioner.source, list(spec.nodePools), dict(classes))
    plans: list[PoolPlan] = []
    for pool in check.plans:
        index = next(i for i, p in enumerate(spec.nodePools) if p.name == pool.name)
        problems = provisioner.pool_issues(f"spec.nodePools[{index}]", pool)
        if problems:
            check.issues.extend(problems)
            check.kept.append(pool.name)
        else:
            plans.append(pool)
    # A version change the cloud cannot make keeps the version composed before.
    version, version_issue = planned_version(provisioner, cluster, observed, DEFAULT_VERSION)
    check.issues.extend([version_issue] if version_issue else [])
    plan = ClusterPlan(
        name,
        SYSTEM_NAMESPACE,
        version,
        cluster,
        tuple(plans),
        kept_pools=tuple(check.kept),
        observed=observed,
    )
    composed = provisioner.compose(plan)
    _hold(composed, observed)
    # A refused pool whose key the provisioner uses itself (`system`) keeps what exists
    # under that key, as any refused pool does, rather than have it changed in place.
    for key in {provisioner.pool_key(pool) for pool in check.kept} & set(observed):
        composed.resources.pop(key, None)
    # What the cloud applies inside the cluster goes through provider-kubernetes'
    # ClusterProviderConfig for it (composed for every cluster, by the function).
    reach = {"kind": objects.CLUSTER_PROVIDER_CONFIG_KIND, "name": name}
    for key, inside in composed.objects.items():
        composed.resources[key] = objects.wrap(
            inside.name, inside.manifest, reach, namespace=SYSTEM_NAMESPACE
        )
    if composed.inside:
        # Releases inside the cluster go through provider-helm's ProviderConfig, the
        # same one a Managed stack composes (the same body, under the same key).
        structs.update(
            rsp.desired.resources[HELM_PROVIDER_CONFIG].resource,
            objects.cluster_provider_config(
                name,
                composed.connection_secret,
                objects.HELM_PROVIDER_CONFIG_API_VERSION,
                identity,
            ),
        )
        if HELM_PROVIDER_CONFIG in observed:
            rsp.desired.resources[HELM_PROVIDER_CONFIG].ready = fnv1.READY_TRUE
    for key, manifest in composed.resources.items():
        structs.update(rsp.desired.resources[key].resource, manifest)
        ready = objects.is_ready(observed.get(key))
        rsp.desired.resources[key].ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE
    # A pool that cannot be built now keeps the node group it has, and its Usage.
    kept = keep_observed(req, rsp, {provisioner.pool_key(pool) for pool in check.kept})
    _order(rsp, observed, name, composed, {key: _observed_ref(observed[key]) for key in kept})
    cloud = Cloud(provisioner, composed, version)
    # A kept pool's node group still runs what it ran: its capacity is what it reports.
    # Not a pool refused for the system group's name: those nodes are not its.
    kept_pools = {pool: provisioner.pool_key(pool) for pool in check.kept}
    pools = {
        **{p: k for p, k in kept_pools.items() if k not in composed.system_pools},
        **composed.pools,
    }
    for pool, key in pools.items():
        nodes = provisioner.ready_nodes(observed.get(key) or {})
        if nodes is not None:
            cloud.ready_nodes[pool] = nodes
    report.report_issues(
        rsp,
        ConditionType.PROVISIONED,
        [*check.issues, *access_issues],
        _provisioned(provisioner, composed, observed, check.kept),
        failed_reason=Reason.INVALID_PROVISIONING,
    )
    return cloud


def _hold(composed: Composed, observed: Mapping[str, Any]) -> None:
    """Leave out what waits for resources not Ready yet (`Composed.after`), unless it was
    composed before: a resource once emitted is never withdrawn."""
    held = {
        key
        for key, needs in composed.after.items()
        if key not in observed and not all(objects.is_ready(observed.get(n)) for n in needs)
    }
    for key in held:
        del composed.resources[key]
    composed.inside = tuple(key for key in composed.inside if key not in held)
    composed.network = tuple(key for key in composed.network if key not in held)


def _provisioned(
    provisioner: Provisioner,
    composed: Composed,
    observed: Mapping[str, Any],
    waiting: Sequence[str],
) -> report.Condition:
    unready = sorted(k for k in composed.resources if not objects.is_ready(observed.get(k)))
    if unready or waiting:
        what = [*unready, *(f"pool {pool} (waiting for its InferenceClass)" for pool in waiting)]
        shown = ", ".join(what[:5]) + (f" and {len(what) - 5} more" if len(what) > 5 else "")
        return report.Condition(
            ConditionType.PROVISIONED,
            False,
            Reason.PROVISIONING,
            f"{provisioner.source}: waiting for {shown}",
        )
    endpoint = provisioner.endpoint(observed.get(composed.cluster) or {})
    at = f" at {endpoint}" if endpoint else ""
    return report.Condition(
        ConditionType.PROVISIONED,
        True,
        Reason.CLUSTER_PROVISIONED,
        f"{provisioner.source} cluster{at} and {len(composed.pools)} node pools ready",
    )
