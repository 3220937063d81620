"""The cluster's serving stack: install it (Managed), observe it (both), report StackReady.

`StackReady` is False when the stack block is invalid (`InvalidStack`, naming
every field; every Release and Usage composed before is kept) or a prerequisite
is observed absent (`PrerequisitesMissing`, listing each and who needs it);
Unknown while releases install (`InstallingStack`, listing what is still missing
meanwhile) or prerequisites are not all observed yet (`CheckingPrerequisites`);
True otherwise (`StackComplete`).
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster
from modelplane_models.inference_cluster import BackendType, PublishedPool, StackStatus, Status

from compose_inference_cluster import releases
from compose_inference_cluster.capacity import publish_capacity
from compose_inference_cluster.prerequisites import Findings, observe
from compose_inference_cluster.replicas import Placed, PlacedReplica
from modelplane.conventions import SchedulingConfig
from modelplane.core.devices import claimed_through_dra
from modelplane.core.issues import has_errors
from modelplane.core.node_taints import NodeTaint
from modelplane.core.vocabulary import ConditionType, Reason
from modelplane.stack import (
    AI_GATEWAY_RELEASE,
    ENVOY_GATEWAY_RELEASE,
    KSERVE_RELEASE,
    LEADER_WORKER_SET,
    NVIDIA_DRA_DRIVER,
    NVIDIA_GPU_DRIVER,
    ClusterFacts,
    Mode,
    PlannedRelease,
    QueueUse,
    cluster_prerequisites,
    plan_releases,
    read_stack,
)
from modelplane.xfn import report


@dataclass(frozen=True)
class StackInputs:
    """What the rest of the function already read, that the stack depends on."""

    name: str
    secret_ref: dict[str, str]
    scheduling: SchedulingConfig
    pools: Sequence[PublishedPool]
    placed: Placed
    tenancy_ok: bool
    observed: Mapping[str, Mapping[str, Any]]
    """The composed resources as observed (`observed_resources`), read once per call."""
    scheduling_ok: bool = True
    """False when spec.scheduling has errors: what it would name is not known then."""
    ready_nodes: Mapping[str, int] | None = None
    """On a created cluster, the nodes the cloud reports for each pool
    (`Provisioner.ready_nodes`), by pool."""
    identity: Mapping[str, Any] | None = None
    """The ClusterProviderConfigs' `identity`, on a created GKE cluster (`access`)."""
    cloud_values: Mapping[str, Mapping[str, Any]] | None = None
    """On a created cluster, the Helm values its cloud adds to the stack's components."""
    nodes_ready: bool = True
    """False on a created cluster whose system node group or pool is not Ready yet:
    no release is installed for the first time until it is (`compose_managed`)."""

    @property
    def namespace(self) -> str:
        """Where the cluster's managed resources live: its kubeconfig Secret's namespace."""
        return self.secret_ref["namespace"]


def gateway_class(cluster: InferenceCluster) -> str | None:
    """`spec.gateway.gatewayClassName` when the cluster has a gateway (the schema
    requires the class name of every gateway)."""
    gateway = cluster.spec.gateway if cluster.spec else None
    return gateway.gatewayClassName if gateway is not None else None


def _device_classes(pools: Sequence[PublishedPool]) -> list[str]:
    return sorted(
        {
            device.deviceClassName
            for pool in pools
            for device in pool.devices or ()
            if claimed_through_dra(device.claim) and device.deviceClassName
        }
    )


def _nvidia_pools(pools: Sequence[PublishedPool]) -> list[PublishedPool]:
    return [
        pool
        for pool in pools
        if any(
            claimed_through_dra(device.claim) and device.driver == NVIDIA_GPU_DRIVER
            for device in pool.devices or ()
        )
    ]


def _gpu_taints(pools: Sequence[PublishedPool]) -> tuple[NodeTaint, ...]:
    """The taints the NVIDIA GPU pools publish (their classes' and, on a cluster
    Modelplane creates, the GPU taint it adds), once each, sorted."""
    found = {NodeTaint.declared(t) for pool in _nvidia_pools(pools) for t in pool.nodeTaints or ()}
    return tuple(sorted(found, key=lambda t: (t.key, t.effect, t.value)))


def _priorities(config: SchedulingConfig) -> list[str]:
    named = {config.default_priority} if config.default_priority else set[str]()
    named |= set(config.allowed_priorities)
    return sorted(named)


def _needs(
    replica: PlacedReplica, facts: ClusterFacts, plan: Sequence[PlannedRelease]
) -> tuple[str, ...]:
    """The releases a replica needs directly (the rest follow through the ordering
    Usages): its DRA driver, backend, scheduler and gateway."""
    planned = {r.name for r in plan}
    names: list[str] = []
    if replica.claims:
        names.append(NVIDIA_DRA_DRIVER.release)
    if facts.kserve:
        names.append(KSERVE_RELEASE)
    elif replica.multi_node:
        names.append(LEADER_WORKER_SET.release)
    if facts.scheduler.install is not None:
        names.append(facts.scheduler.install.releases[-1].name)
    if facts.gateway_class:
        # Its route reaches its InferencePool through Envoy AI Gateway.
        names += [ENVOY_GATEWAY_RELEASE, AI_GATEWAY_RELEASE]
    return tuple(sorted(n for n in set(names) if n in planned))


def compose_stack(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    cluster: InferenceCluster,
    inputs: StackInputs,
    status: Status,
) -> None:
    """Compose the stack and its observers; set StackReady, and `status.stack` and
    `status.capacity` on `status`."""
    spec = cluster.spec
    config, issues = read_stack(spec.stack if spec else None)
    backend = spec.backend.type if spec and spec.backend and spec.backend.type else None
    facts = ClusterFacts(
        kserve=backend == BackendType.K_SERVE,
        scheduler=inputs.scheduling.scheduler,
        gateway_class=gateway_class(cluster),
        nvidia_gpus=bool(_nvidia_pools(inputs.pools)),
        gpu_taints=_gpu_taints(inputs.pools),
        cloud_values=inputs.cloud_values or {},
        extension_ready=releases.extension_ready(inputs.observed),
    )
    observed = inputs.observed
    placed = inputs.placed
    installed: releases.Installed | None = None
    if has_errors(issues):
        releases.keep_all(req, rsp)
    elif config.mode is Mode.MANAGED:
        plan, plan_issues = plan_releases(facts, config)
        issues += plan_issues
        installed = releases.compose_managed(
            rsp,
            observed,
            cluster=inputs.name,
            namespace=inputs.namespace,
            secret_ref=inputs.secret_ref,
            identity=inputs.identity,
            plan=plan,
            replicas=placed.replicas,
            needs={f"{r.namespace}/{r.name}": _needs(r, facts, plan) for r in placed.replicas},
            keep_replica_usages=placed.unreadable > 0,
            req=req,
            nodes_ready=inputs.nodes_ready,
        )
    else:
        releases.hand_over(req, rsp, observed)

    queues: list[QueueUse] = [r.queue for r in placed.replicas if r.queue is not None]
    priorities = _priorities(inputs.scheduling)
    prerequisites = cluster_prerequisites(
        kserve=facts.kserve,
        scheduler=facts.scheduler,
        gangs=inputs.scheduling.gang_enabled,
        gateway=facts.gateway_class,
        device_classes=_device_classes(inputs.pools),
        priorities=priorities,
        priority_refs=[ref for r in placed.replicas for ref in r.priority_objects],
        queues=queues,
    )
    findings = observe(
        req,
        rsp,
        observed,
        cluster=inputs.name,
        namespace=inputs.namespace,
        prerequisites=prerequisites,
        complete=placed.unreadable == 0 and inputs.tenancy_ok and inputs.scheduling_ok,
    )
    status.capacity = publish_capacity(
        rsp,
        observed,
        cluster=inputs.name,
        namespace=inputs.namespace,
        pools=inputs.pools,
        replicas=placed.replicas,
        ready_nodes=inputs.ready_nodes,
        spec_pools=cluster.spec.nodePools if cluster.spec else (),
    )
    report.report_issues(
        rsp,
        ConditionType.STACK_READY,
        issues,
        _condition(findings, installed),
        failed_reason=Reason.INVALID_STACK,
    )
    status.stack = StackStatus.model_validate(findings.status())


def _condition(findings: Findings, installed: releases.Installed | None) -> report.Condition:
    if installed is not None and (installed.waiting or installed.unready):
        # What a release being installed brings is missing until it runs: that is
        # progress, not a fault (new replicas are still kept away from it).
        pending = sorted(installed.waiting + installed.unready)
        message = f"installing: {', '.join(pending)}"
        if installed.awaiting_nodes:
            message += " (new releases wait for the cluster's system nodes)"
        if findings.missing:
            message += f"; missing until then: {findings.describe_missing()}"
        return report.Condition(ConditionType.STACK_READY, None, Reason.INSTALLING_STACK, message)
    if findings.missing:
        return report.Condition(
            ConditionType.STACK_READY,
            False,
            Reason.PREREQUISITES_MISSING,
            f"missing: {findings.describe_missing()}",
        )
    if findings.unknown:
        total = findings.checked + len(findings.unknown)
        return report.Condition(
            ConditionType.STACK_READY,
            None,
            Reason.CHECKING_PREREQUISITES,
            f"{findings.checked} of {total} prerequisites observed",
        )
    installs = f"; {len(installed.composed)} releases installed" if installed else ""
    if installed and installed.retiring:
        installs += f"; retiring once no Usage names them: {', '.join(installed.retiring)}"
    return report.Condition(
        ConditionType.STACK_READY,
        True,
        Reason.STACK_COMPLETE,
        f"{findings.present} prerequisites present{installs}",
    )
