"""Render what one ModelReplica runs on its cluster."""

from dataclasses import replace
from typing import Any

from modelplane_models.inference_cluster import BackendType

from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.kinds import LLM_INFERENCE_SERVICE, RenderedWorkload, WorkloadKind
from modelplane.core.vocabulary import (
    LABEL_MANAGED_BY,
    LABEL_TENANT_NAMESPACE,
    MANAGED_BY,
    ROLE_DECODE,
    ROLE_WORKERS,
    Reason,
)

from .claims import claim_template
from .compute_domains import check_fits, compute_domain, domain_nodes
from .disaggregation import routed
from .identity import (
    channel_template_name,
    check_identity,
    claim_template_name,
    identity_labels,
)
from .kserve import POD_SECURITY as KSERVE_POD_SECURITY
from .kserve import llm_inference_service
from .model import (
    SHARED_MANAGEMENT_POLICIES,
    ClusterInput,
    RemoteObject,
    RenderedReplica,
    ReplicaInput,
    RoleInput,
)
from .native import Wiring, native_workload
from .pods import check_pool
from .traffic import prefill_address, replica_url, traffic_objects

NAMESPACE_KEY = "namespace"


def claims_key(role: str) -> str:
    return f"claims-{role}"


def workload_key(role: str) -> str:
    return f"workload-{role}"


def on_cluster(cluster: ClusterInput, invalid: InvalidInputError) -> InvalidInputError:
    """A problem with the cluster's own spec, reported on the replica's spec.clusterName."""
    return InvalidInputError(
        [
            Issue("spec.clusterName", f"InferenceCluster {cluster.name!r} {issue}", issue.reason)
            for issue in invalid.issues
        ]
    )


def tenant_namespace(namespace: str, cluster: ClusterInput) -> RemoteObject:
    """The Namespace the objects of control-plane `namespace` go in on `cluster`.

    Every composite that puts objects there (each replica of the namespace, a
    ModelService on a hub) composes this same Namespace, so none of them may
    delete it when it goes away, and all of them write it alike. The platform's
    labels and annotations come first; Modelplane's own keys are reserved.
    """
    tenancy = cluster.tenancy
    try:
        name = tenancy.namespace_for(namespace, cluster.name)
        labels = (
            tenancy.namespace_labels(namespace, cluster.name, KSERVE_POD_SECURITY)
            if cluster.backend is BackendType.K_SERVE
            else tenancy.namespace_labels(namespace, cluster.name)
        )
    except InvalidInputError as invalid:
        raise on_cluster(cluster, invalid) from None
    labels |= {LABEL_MANAGED_BY: MANAGED_BY, LABEL_TENANT_NAMESPACE: namespace}
    metadata: dict[str, Any] = {"name": name, "labels": dict(sorted(labels.items()))}
    annotations = tenancy.namespace_annotations(namespace, cluster.name)
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    manifest = {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}
    return RemoteObject(
        key=NAMESPACE_KEY, manifest=manifest, management_policies=SHARED_MANAGEMENT_POLICIES
    )


def _check_placement(replica: ReplicaInput, cluster: ClusterInput) -> None:
    if replica.cluster_name != cluster.name:
        raise InvalidInputError.at(
            "spec.clusterName",
            f"names {replica.cluster_name!r} but the cluster given is {cluster.name!r}",
            Reason.CLUSTER_NOT_FOUND,
        )
    for role in replica.roles:
        path = f"{role.path}.nodePoolName"
        check_pool(role.placed.pool, path)
        if role.placed.pool not in cluster.pools:
            known = ", ".join(cluster.pools) or "none"
            raise InvalidInputError.at(
                path,
                f"pool {role.placed.pool!r} is not on InferenceCluster {cluster.name} "
                f"(pools: {known})",
                Reason.POOL_NOT_FOUND,
            )


def _claims(
    replica: ReplicaInput, role: RoleInput, namespace: str, cluster: ClusterInput
) -> RemoteObject:
    manifest = claim_template(
        role,
        name=claim_template_name(replica, role.placed.role),
        namespace=namespace,
        labels=identity_labels(replica, role.placed.role),
        cluster=cluster,
    )
    return RemoteObject(key=claims_key(role.placed.role), manifest=manifest)


def _workload(role: str, kind: WorkloadKind, manifest: dict[str, Any]) -> RenderedWorkload:
    return RenderedWorkload(key=workload_key(role), role=role, kind=kind, manifest=manifest)


def render_replica(replica: ReplicaInput, cluster: ClusterInput) -> RenderedReplica:
    """Everything the replica runs on `cluster`, each part sorted by key.

    Deterministic: the same inputs give equal objects in the same order. Raises
    InvalidInputError naming the field for inputs at fault (unknown pool, no
    engine container, an identity too long to be a label value, a topology the
    backend cannot run).
    """
    check_identity(replica)
    if replica.backend is not None:
        # What it was placed to render with: a cluster whose backend changed since keeps
        # it as it runs until its replacement serves (`scheduling.moves`).
        cluster = replace(cluster, backend=replica.backend)
    _check_placement(replica, cluster)
    tenant = tenant_namespace(replica.namespace, cluster)
    namespace: str = tenant.manifest["metadata"]["name"]
    claims: list[RemoteObject] = []
    claim_names: dict[str, str] = {}
    for role in replica.roles:
        if role.placed.device_requests:
            claim = _claims(replica, role, namespace, cluster)
            claim_names[role.placed.role] = claim.manifest["metadata"]["name"]
            claims.append(claim)

    # Whichever backend runs it, a multi-node role on an NVLink pool needs its
    # ComputeDomain, and its pods the domain's IMEX channel.
    channels: dict[str, str] = {}
    for role in replica.roles:
        size = domain_nodes(role, cluster)
        if size:
            check_fits(role, cluster, size)
            domain = compute_domain(replica, role, namespace=namespace)
            channels[role.placed.role] = channel_template_name(replica, role.placed.role)
            claims.append(domain)

    workloads: list[RenderedWorkload] = []
    if cluster.backend is BackendType.K_SERVE:
        service = llm_inference_service(
            replica, cluster, namespace=namespace, claims=claim_names, channels=channels
        )
        main = ROLE_DECODE if replica.disaggregated else ROLE_WORKERS
        workloads.append(_workload(main, LLM_INFERENCE_SERVICE, service))
    else:
        prefill = prefill_address(replica, namespace)
        pd_routed = routed(replica, cluster)
        for role in replica.roles:
            wiring = Wiring(
                namespace=namespace,
                claim=claim_names.get(role.placed.role),
                prefill=prefill if role.placed.role == ROLE_DECODE else None,
                channel=channels.get(role.placed.role),
                pd_routed=pd_routed,
            )
            kind, manifest = native_workload(replica, role, wiring)
            workloads.append(_workload(role.placed.role, kind, manifest))
    return RenderedReplica(
        namespace=tenant,
        claims=tuple(sorted(claims, key=lambda o: o.key)),
        workloads=tuple(sorted(workloads, key=lambda w: w.key)),
        traffic=tuple(traffic_objects(replica, cluster, namespace)),
        url=replica_url(replica, cluster, namespace),
    )
