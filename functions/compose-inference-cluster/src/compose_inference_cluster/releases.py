"""A Managed stack: provider-helm Releases, in order, protected by Usages.

- provider-helm's `ClusterProviderConfig` for the cluster, beside provider-kubernetes'
  (same kubeconfig Secret), composed while any Release is.
- One namespaced `helm.m.crossplane.io` Release per planned release, in the
  namespace of the cluster's kubeconfig Secret. A release is composed the first
  time only once every release it comes `after` reports Ready; once composed it is
  always composed (a prerequisite flickering must never uninstall what runs).
- Usages (`protection.crossplane.io/v1beta1`): one per ordering edge (the
  prerequisite used by its dependent), so a stack is uninstalled dependents first;
  and one per release a placed ModelReplica needs directly (its DRA driver, backend,
  scheduler, gateway), in the replica's namespace, used by the replica, so no
  release is uninstalled while a replica depends on it.
- Observe mode hands installed charts over: every Release composed before is
  re-emitted with `managementPolicies: ["Observe"]`, so Crossplane stops managing
  it and never uninstalls it.
- Invalid stack input keeps every Release, Usage and ProviderConfig as it is.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from compose_inference_cluster.gateway import GATEWAY_KEY
from compose_inference_cluster.prerequisites import observer_key
from compose_inference_cluster.replicas import PlacedReplica
from compose_inference_cluster.retiring import retire
from modelplane.core.charts import RELEASE_API_VERSION, RELEASE_ROLLBACK_LIMIT
from modelplane.core.kinds.base import mapping
from modelplane.core.naming import HELM_RELEASE_MAX, fitted, hashed_name
from modelplane.core.refs import USAGE_API_VERSION, crd
from modelplane.core.vocabulary import API_VERSION, MODEL_REPLICA
from modelplane.stack import (
    AI_GATEWAY_RELEASE,
    ENVOY_GATEWAY_RELEASE,
    INFERENCE_POOL_CRD,
    PlannedRelease,
    Seen,
    calls_extension,
    seen,
)
from modelplane.xfn import objects, structs
from modelplane.xfn.runner import keep_observed
from modelplane.xfn.structs import to_dict

HELM_PROVIDER_CONFIG: Final = "helm-provider-config"
RELEASE_PREFIX: Final = "release-"
USAGE_PREFIX: Final = "usage-"
REPLICA_USAGE_PREFIX: Final = "usage-replica-"


def release_key(name: str) -> str:
    return f"{RELEASE_PREFIX}{name}"


def release_name(cluster: str, release: str) -> str:
    """The Release's `metadata.name`, which provider-helm takes as the Helm release name:
    within Helm's limit for any cluster name."""
    return fitted(f"{cluster}-{release}", HELM_RELEASE_MAX)


@dataclass
class Installed:
    """What the Managed stack composed: releases by name, and those waiting or not Ready."""

    composed: list[str] = field(default_factory=list[str])
    waiting: list[str] = field(default_factory=list[str])
    unready: list[str] = field(default_factory=list[str])
    retiring: list[str] = field(default_factory=list[str])
    """Releases no longer planned, kept while a Usage still names them (`retiring`)."""
    awaiting_nodes: bool = False
    """Whether some release waits for the created cluster's system nodes (`nodes_ready`)."""


def _ready(rsp: fnv1.RunFunctionResponse, key: str, observed: Mapping[str, Any]) -> None:
    rsp.desired.resources[key].ready = (
        fnv1.READY_TRUE if objects.is_ready(observed.get(key)) else fnv1.READY_FALSE
    )


def _created(rsp: fnv1.RunFunctionResponse, key: str, observed: Mapping[str, Any]) -> None:
    # ProviderConfigs and Usages have no readiness of their own: created is ready.
    if key in observed:
        rsp.desired.resources[key].ready = fnv1.READY_TRUE


def extension_ready(observed: Mapping[str, Any]) -> bool:
    """Whether Envoy Gateway may call Envoy AI Gateway (`ClusterFacts.extension_ready`):
    the observed envoy-gateway Release calls it already (kept), or the controller's
    Release has reported Ready and the InferencePool CRD is seen on the cluster: Envoy
    Gateway v1.8.1 watches every extension backend kind without checking its CRD, so
    with it absent the whole gateway would stop syncing, while Envoy AI Gateway skips
    that controller and reports Ready all the same."""
    envoy = mapping(observed.get(release_key(ENVOY_GATEWAY_RELEASE)))
    if calls_extension(
        mapping(mapping(mapping(envoy.get("spec")).get("forProvider")).get("values"))
    ):
        return True
    pool_crd, _ = seen(observed.get(observer_key(crd(INFERENCE_POOL_CRD))))
    return pool_crd is Seen.PRESENT and objects.is_ready(
        observed.get(release_key(AI_GATEWAY_RELEASE))
    )


def _release(
    cluster: str, namespace: str, planned: PlannedRelease, provider: dict[str, str]
) -> dict[str, Any]:
    for_provider: dict[str, Any] = {
        "chart": dict(planned.chart),
        "namespace": planned.namespace,
        # Ready means the chart's workloads run: what a dependent release needs.
        "wait": True,
    }
    if planned.values:
        for_provider["values"] = dict(planned.values)
    return {
        "apiVersion": RELEASE_API_VERSION,
        "kind": "Release",
        "metadata": {"name": release_name(cluster, planned.name), "namespace": namespace},
        "spec": {
            "forProvider": for_provider,
            "providerConfigRef": provider,
            "rollbackLimit": RELEASE_ROLLBACK_LIMIT,
        },
    }


def compose_managed(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    *,
    cluster: str,
    namespace: str,
    secret_ref: dict[str, str],
    identity: Mapping[str, Any] | None = None,
    plan: Sequence[PlannedRelease],
    replicas: Sequence[PlacedReplica],
    needs: Mapping[str, tuple[str, ...]],
    keep_replica_usages: bool,
    req: fnv1.RunFunctionRequest,
    nodes_ready: bool = True,
) -> Installed:
    """Compose the releases whose prerequisites are Ready (and every one composed before),
    their ProviderConfig and the Usages that order and protect them. `nodes_ready` is
    False while a cluster Modelplane creates has no system node to run a chart's pods:
    no release is installed for the first time then, since one installed with `wait`
    on a cluster without nodes times out and fails."""
    installed = Installed()
    provider = {"kind": objects.CLUSTER_PROVIDER_CONFIG_KIND, "name": cluster}
    by_name = {planned.name: planned for planned in plan}
    for planned in plan:
        key = release_key(planned.name)
        prerequisites_ready = all(
            objects.is_ready(observed.get(release_key(name))) for name in planned.after
        )
        if key not in observed and not (prerequisites_ready and nodes_ready):
            installed.waiting.append(planned.name)
            installed.awaiting_nodes |= not nodes_ready
            continue
        structs.update(
            rsp.desired.resources[key].resource, _release(cluster, namespace, planned, provider)
        )
        _ready(rsp, key, observed)
        installed.composed.append(planned.name)
        if not objects.is_ready(observed.get(key)):
            installed.unready.append(planned.name)
    composed = set(installed.composed)
    for planned in plan:
        if planned.name not in composed:
            continue
        for prerequisite in planned.after:
            if prerequisite in composed:
                _order(rsp, observed, cluster, namespace, by_name[prerequisite], planned)
    for replica in replicas:
        for name in needs.get(f"{replica.namespace}/{replica.name}", ()):
            if name in composed:
                _protect(rsp, observed, cluster, namespace, by_name[name], replica)
    if ENVOY_GATEWAY_RELEASE in composed and GATEWAY_KEY in rsp.desired.resources:
        _keep_for_gateway(rsp, observed, cluster, namespace, by_name[ENVOY_GATEWAY_RELEASE])
    # What the plan no longer holds leaves Usages first, its Release in a later
    # reconcile; a replica that cannot be read may still need what its Usages protect.
    installed.retiring = retire(
        req,
        rsp,
        observed,
        release_keys={release_name(cluster, n): release_key(n) for n in installed.composed},
        usage_prefix=USAGE_PREFIX,
        replica_usage_prefix=REPLICA_USAGE_PREFIX,
        release_prefix=RELEASE_PREFIX,
        placed={(r.namespace, r.name) for r in replicas},
        keep_replica_usages=keep_replica_usages,
    )
    if installed.composed or installed.retiring:
        _provider_config(rsp, observed, cluster, secret_ref, identity)
    return installed


def _provider_config(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    cluster: str,
    secret_ref: dict[str, str],
    identity: Mapping[str, Any] | None,
) -> None:
    structs.update(
        rsp.desired.resources[HELM_PROVIDER_CONFIG].resource,
        objects.cluster_provider_config(
            cluster, secret_ref, objects.HELM_PROVIDER_CONFIG_API_VERSION, identity
        ),
    )
    _created(rsp, HELM_PROVIDER_CONFIG, observed)


def _release_ref(cluster: str, namespace: str, planned: PlannedRelease) -> dict[str, Any]:
    return {
        "apiVersion": RELEASE_API_VERSION,
        "kind": "Release",
        "resourceRef": {"name": release_name(cluster, planned.name), "namespace": namespace},
    }


def _order(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    cluster: str,
    namespace: str,
    prerequisite: PlannedRelease,
    dependent: PlannedRelease,
) -> None:
    key = f"{USAGE_PREFIX}{prerequisite.name}-by-{dependent.name}"
    by = _release_ref(cluster, namespace, dependent)
    by["resourceRef"].pop("namespace")
    body = {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": {
            "name": hashed_name(f"{cluster}-{prerequisite.name}", cluster, key),
            "namespace": namespace,
        },
        "spec": {
            "of": _release_ref(cluster, namespace, prerequisite),
            "by": by,
            "replayDeletion": True,
        },
    }
    structs.update(rsp.desired.resources[key].resource, body)
    _created(rsp, key, observed)


def _protect(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    cluster: str,
    namespace: str,
    release: PlannedRelease,
    replica: PlacedReplica,
) -> None:
    key = f"{REPLICA_USAGE_PREFIX}{release.name}-{replica.namespace}-{replica.name}"
    body = {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": {
            "name": hashed_name(
                f"{cluster}-{release.name}", cluster, release.name, replica.namespace, replica.name
            ),
            "namespace": replica.namespace,
        },
        "spec": {
            "of": _release_ref(cluster, namespace, release),
            "by": {
                "apiVersion": API_VERSION,
                "kind": MODEL_REPLICA,
                "resourceRef": {"name": replica.name},
            },
            "replayDeletion": True,
        },
    }
    structs.update(rsp.desired.resources[key].resource, body)
    _created(rsp, key, observed)


def _keep_for_gateway(
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    cluster: str,
    namespace: str,
    release: PlannedRelease,
) -> None:
    """Envoy Gateway stays installed until the cluster's Gateway Object is gone. Its
    proxy Service (a cloud load balancer) is owned by the platform's GatewayClass, not
    the Gateway: uninstalled first, the controller would never delete it, and the load
    balancer would outlive the Gateway (and hold up a created cluster's network)."""
    key = f"{USAGE_PREFIX}{release.name}-by-{GATEWAY_KEY}"
    gateway = structs.pick(rsp.desired.resources[GATEWAY_KEY].resource, ("metadata", "name"))
    body = {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": {
            "name": hashed_name(f"{cluster}-{release.name}", cluster, key),
            "namespace": namespace,
        },
        "spec": {
            "of": _release_ref(cluster, namespace, release),
            "by": {
                "apiVersion": objects.OBJECT_API_VERSION,
                "kind": "Object",
                "resourceRef": {"name": str(mapping(gateway.get("metadata")).get("name", ""))},
            },
            "replayDeletion": True,
        },
    }
    structs.update(rsp.desired.resources[key].resource, body)
    _created(rsp, key, observed)


def hand_over(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, observed: Mapping[str, Any]
) -> list[str]:
    """Observe mode: every Release composed before, kept but only observed, so the
    charts stay installed and the platform takes them over. Returns their keys."""
    keys = sorted(k for k in observed if k.startswith(RELEASE_PREFIX))
    kept = keep_observed(req, rsp, set(keys))
    for key in kept:
        body = to_dict(rsp.desired.resources[key].resource)
        spec = body.get("spec")
        if isinstance(spec, dict):
            cast(dict[str, Any], spec)["managementPolicies"] = list(objects.OBSERVE_ONLY)
            rsp.desired.resources[key].resource.Clear()
            structs.update(rsp.desired.resources[key].resource, body)
    if kept and HELM_PROVIDER_CONFIG in observed:
        keep_observed(req, rsp, {HELM_PROVIDER_CONFIG})
    return kept


def keep_all(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    """Bad stack input: every Release, Usage and provider-helm ProviderConfig as it is."""
    keys = {
        k
        for k in req.observed.resources
        if k.startswith((RELEASE_PREFIX, USAGE_PREFIX)) or k == HELM_PROVIDER_CONFIG
    }
    keep_observed(req, rsp, keys)
