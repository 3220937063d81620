"""Which Helm releases a Managed stack installs on one cluster, in which order.

The cluster's backend, gateway, scheduler and hardware decide the components:

- Node Feature Discovery and the NVIDIA DRA driver (GPU allocation through DRA)
  when a pool's class declares DRA devices of NVIDIA's GPU driver;
- LeaderWorkerSet always (multi-node workers run as LeaderWorkerSets, on KServe
  too);
- cert-manager, Envoy Gateway and KServe's LLMInferenceService controller on a
  KServe cluster (its controller needs the Gateway API and webhook certificates);
- Envoy Gateway when the cluster declares a gateway, with Envoy AI Gateway (its CRDs,
  then its controller), the extension server that routes HTTPRoutes to InferencePools;
- the in-cluster scheduler `spec.scheduling.provider` names, from its module.

The DaemonSets Node Feature Discovery and the DRA driver run on every GPU node
tolerate the taints the GPU pools publish: their classes' declared taints, and on
a cluster Modelplane creates the GPU taint it adds (`GPU_NODE_TOLERATIONS`). On a
cluster Modelplane creates, the cloud adds what its nodes need (`cloud_values`: on
GKE the DRA driver's `nvidiaDriverRoot`); an existing cluster's values are the
components' own.

Each release lists the releases that must report Ready before it is composed
(`after`): a component's releases in order, the DRA driver after Node Feature
Discovery (it labels the GPU nodes the driver runs on), KServe's controller after
its CRDs, cert-manager, LeaderWorkerSet and the gateway, Envoy AI Gateway after
Envoy Gateway (as upstream installs them), and LeaderWorkerSet and the scheduler in
the order the scheduler's module asks. The same edges order deletion (Usages).
Deterministic: the plan is sorted by release name.

Envoy Gateway calls Envoy AI Gateway for InferencePool backends only once Envoy AI
Gateway's controller has run (`ClusterFacts.extension_ready`): Envoy Gateway v1.8.1
reports ready only once it can list every backend kind it is configured with, and
the right to list InferencePools comes with Envoy AI Gateway's chart, which in turn
needs the Gateway API CRDs that Envoy Gateway's chart installs. Configured from the
start, neither release could ever be Ready first; so Envoy Gateway installs with its
own values, Envoy AI Gateway follows, and then the extension is added to Envoy
Gateway's values (it reloads its configuration file without a restart), as
upstream's InferencePool guide enables it on a running Envoy Gateway.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from modelplane.conventions.schedulers import Scheduler
from modelplane.core.charts import Component
from modelplane.core.issues import Issue, warning
from modelplane.core.node_taints import NodeTaint, tolerations
from modelplane.core.vocabulary import Reason
from modelplane.stack.components import (
    CERT_MANAGER,
    ENVOY_AI_GATEWAY,
    ENVOY_GATEWAY,
    ENVOY_GATEWAY_RELEASE,
    GPU_NODE_TOLERATIONS,
    INFERENCE_POOL_EXTENSION,
    KSERVE,
    KSERVE_RELEASE,
    LEADER_WORKER_SET,
    NODE_FEATURE_DISCOVERY,
    NVIDIA_DRA_DRIVER,
    all_components,
)
from modelplane.stack.config import ROOT, StackConfig


@dataclass(frozen=True)
class ClusterFacts:
    """What decides a cluster's stack."""

    kserve: bool
    scheduler: Scheduler
    gateway_class: str | None = None
    nvidia_gpus: bool = False
    # The taints the cluster's NVIDIA GPU pools publish (their classes' and, on a
    # cluster Modelplane creates, the GPU taint it adds).
    gpu_taints: tuple[NodeTaint, ...] = ()
    # Values a created cluster's cloud needs in a component's releases, by component
    # key (on GKE, where the NVIDIA DRA driver finds the node's driver).
    cloud_values: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    # Envoy AI Gateway's controller release has reported Ready, or Envoy Gateway calls
    # it already (kept on so that a controller restart never reconfigures the gateway).
    extension_ready: bool = False


@dataclass(frozen=True)
class PlannedRelease:
    """One Helm release to install: its chart at a version, its values, and what first."""

    component: str
    name: str
    chart: dict[str, str]
    namespace: str
    values: Mapping[str, Any] = field(hash=False)
    after: tuple[str, ...] = ()


def merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, maps recursively (Helm's values precedence)."""
    out = dict(base)
    for key, value in extra.items():
        current = out.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            out[key] = merged(cast(Mapping[str, Any], current), cast(Mapping[str, Any], value))
        else:
            out[key] = value
    return out


def components(facts: ClusterFacts) -> list[Component]:
    """The components this cluster needs, in install-priority order."""
    needed: list[Component] = []
    if facts.nvidia_gpus:
        needed += [NODE_FEATURE_DISCOVERY, NVIDIA_DRA_DRIVER]
    needed.append(LEADER_WORKER_SET)
    if facts.kserve or facts.gateway_class:
        needed.append(ENVOY_GATEWAY)
    if facts.gateway_class:
        # Every replica route behind the cluster's Gateway has an InferencePool backend.
        needed.append(ENVOY_AI_GATEWAY)
    if facts.kserve:
        needed += [CERT_MANAGER, KSERVE]
    if facts.scheduler.install is not None:
        needed.append(facts.scheduler.install)
    return needed


def _after(facts: ClusterFacts, names: set[str]) -> dict[str, set[str]]:
    """Cross-component edges: release name -> releases that must be Ready first."""
    edges: dict[str, set[str]] = {}

    def edge(dependent: str, prerequisite: str) -> None:
        if dependent in names and prerequisite in names:
            edges.setdefault(dependent, set()).add(prerequisite)

    edge(NVIDIA_DRA_DRIVER.release, NODE_FEATURE_DISCOVERY.release)
    for prerequisite in (CERT_MANAGER.release, LEADER_WORKER_SET.release, ENVOY_GATEWAY_RELEASE):
        edge(KSERVE_RELEASE, prerequisite)
    edge(ENVOY_AI_GATEWAY.releases[0].name, ENVOY_GATEWAY_RELEASE)
    install = facts.scheduler.install
    if install is not None:
        for release in install.releases:
            if facts.scheduler.installs_after_lws:
                edge(release.name, LEADER_WORKER_SET.release)
            if facts.scheduler.installs_before_lws():
                edge(LEADER_WORKER_SET.release, release.name)
    return edges


def plan_releases(
    facts: ClusterFacts, config: StackConfig
) -> tuple[list[PlannedRelease], list[Issue]]:
    """The releases to install, sorted by name, and a warning for each version override
    of a component this cluster does not install."""
    needed = components(facts)
    names = {release.name for c in needed for release in c.releases}
    edges = _after(facts, names)
    plan: list[PlannedRelease] = []
    for component in needed:
        version = config.version(component.key, component.version)
        previous: str | None = None
        for release in component.releases:
            values = dict(release.values)
            if component is LEADER_WORKER_SET:
                values = merged(values, facts.scheduler.lws_values())
            if component is facts.scheduler.install:
                values = merged(values, facts.scheduler.chart_values())
            if component is ENVOY_GATEWAY and ENVOY_AI_GATEWAY in needed and facts.extension_ready:
                values = merged(values, INFERENCE_POOL_EXTENSION)
            on_gpu_nodes = GPU_NODE_TOLERATIONS.get(component.key)
            if on_gpu_nodes is not None and facts.gpu_taints:
                parent, key = on_gpu_nodes
                values = merged(values, {parent: {key: tolerations(facts.gpu_taints)}})
            values = merged(values, facts.cloud_values.get(component.key, {}))
            after = set(edges.get(release.name, ()))
            if previous is not None:
                after.add(previous)
            plan.append(
                PlannedRelease(
                    component=component.key,
                    name=release.name,
                    chart=release.chart.for_provider(version),
                    namespace=release.namespace,
                    values=values,
                    after=tuple(sorted(after)),
                )
            )
            previous = release.name
    used = {c.key for c in needed}
    issues = [
        warning(
            f"{ROOT}.versions[{key}]",
            f"{all_components()[key].title} is not installed on this cluster; the override "
            "does nothing",
            Reason.STACK_FIELD_IGNORED,
        )
        for key in sorted(config.versions)
        if key not in used
    ]
    return sorted(plan, key=lambda r: r.name), issues
