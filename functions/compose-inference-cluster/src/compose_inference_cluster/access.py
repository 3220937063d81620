"""The `identity` of the ClusterProviderConfigs of a GKE cluster Modelplane creates.

Its kubeconfig carries no credentials of its own, so both ClusterProviderConfigs
authenticate with the Google credentials of the GCP provider config the cluster
is created with (`modelplane.provisioning.gke_identity`), which is required here.
EKS and existing clusters have none: ClusterAuth's kubeconfig carries a token,
and an existing cluster's kubeconfig is the user's.

When that GCP provider config gives no identity (missing, or credentials that
cannot be handed on), the cloud is composed as usual and what would reach inside
the cluster is held (`hold_inside`): design/gke-provider-identity.md says why.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster
from modelplane_models.inference_cluster import GKECluster, Kind

from compose_inference_cluster.provision import source_of
from modelplane.core.charts import RELEASE_API_VERSION
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.observed import as_map
from modelplane.core.refs import USAGE_API_VERSION
from modelplane.provisioning.gke import GkeProvisioner
from modelplane.provisioning.gke_identity import (
    GCP_PROVIDER_CONFIG_API_VERSION,
    provider_config_ref,
    provider_identity,
)
from modelplane.xfn import objects, required, structs
from modelplane.xfn.runner import keep_observed

GCP_PROVIDER_CONFIG: Final = "gcp-provider-config"


def _gke_block(cluster: InferenceCluster) -> GKECluster | None:
    if source_of(cluster) != GkeProvisioner.source or cluster.spec is None:
        return None
    return cluster.spec.cluster.gke


def require_identity(
    rsp: fnv1.RunFunctionResponse, cluster: InferenceCluster, namespace: str
) -> None:
    """Ask for the GCP provider config a GKE cluster is created with."""
    block = _gke_block(cluster)
    if block is None:
        return
    # One call per kind, each naming its kind: tests/install/test_rbac.py reads the
    # kinds a function requires from these calls.
    kind, name, in_namespace = provider_config_ref(block, namespace)
    if kind == Kind.PROVIDER_CONFIG:
        required.require_named(
            rsp,
            GCP_PROVIDER_CONFIG,
            GCP_PROVIDER_CONFIG_API_VERSION,
            Kind.PROVIDER_CONFIG.value,
            name,
            namespace=in_namespace,
        )
    else:
        required.require_named(
            rsp,
            GCP_PROVIDER_CONFIG,
            GCP_PROVIDER_CONFIG_API_VERSION,
            Kind.CLUSTER_PROVIDER_CONFIG.value,
            name,
        )


@dataclass(frozen=True)
class Access:
    """How both ClusterProviderConfigs authenticate besides the kubeconfig.

    `identity` is None when the kubeconfig is enough (EKS, Existing) or when it cannot
    be made (`issues`, then non-empty: the cluster's inside is held, `hold_inside`)."""

    identity: dict[str, Any] | None = None
    issues: tuple[Issue, ...] = ()

    @property
    def held(self) -> bool:
        return bool(self.issues)


def identity(req: fnv1.RunFunctionRequest, cluster: InferenceCluster, namespace: str) -> Access:
    """The identity both ClusterProviderConfigs carry, or the issues that keep it from
    being made: a GCP provider config missing, or whose credentials cannot be handed
    on. Call once `require_identity`'s fetch is in."""
    block = _gke_block(cluster)
    if block is None:
        return Access()
    kind, name, in_namespace = provider_config_ref(block, namespace)
    shown = f"{in_namespace}/{name}" if in_namespace else name
    try:
        found = required.resolve(req, GCP_PROVIDER_CONFIG).first()
        return Access(provider_identity(found, kind, shown))
    except InvalidInputError as invalid:
        # Not the whole response's bad input: the cloud cluster and its pools need
        # none of this, and go on being composed (`hold_inside` says what waits).
        return Access(issues=tuple(_held(issue) for issue in invalid.issues))


def _held(issue: Issue) -> Issue:
    """`issue`, saying what waits for it."""
    return Issue(issue.path, f"{issue.message}; {HELD}", issue.reason, issue.severity)


HELD: Final = (
    "until then the cluster's ClusterProviderConfigs, and the Releases and Objects "
    "composed through them, are kept as they are, or not created"
)

# What reaches inside the cluster through its ClusterProviderConfigs.
_INSIDE: Final = frozenset(
    {(objects.OBJECT_API_VERSION, objects.OBJECT_KIND), (RELEASE_API_VERSION, "Release")}
)
_READ: Final = (
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("spec", "providerConfigRef"),
    ("spec", "of"),
    ("spec", "by"),
)


def _kind(body: Mapping[str, Any]) -> tuple[str, str]:
    return str(body.get("apiVersion", "")), str(body.get("kind", ""))


def _through(body: Mapping[str, Any], cluster: str) -> bool:
    """Whether a composed resource is applied inside the cluster: an Object or Release
    through the cluster's ClusterProviderConfig."""
    ref = as_map(as_map(body.get("spec")).get("providerConfigRef"))
    return (
        _kind(body) in _INSIDE
        and ref.get("kind") == objects.CLUSTER_PROVIDER_CONFIG_KIND
        and ref.get("name") == cluster
    )


def _named(body: Mapping[str, Any]) -> tuple[str, str, str]:
    return (*_kind(body), str(as_map(body.get("metadata")).get("name", "")))


def _uses(body: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The Objects and Releases a Usage names (`of`, `by`)."""
    if _kind(body) != (USAGE_API_VERSION, "Usage"):
        return []
    spec = as_map(body.get("spec"))
    ends = [as_map(spec.get(end)) for end in ("of", "by")]
    found = [(*_kind(end), str(as_map(end.get("resourceRef")).get("name", ""))) for end in ends]
    return [ref for ref in found if ref[:2] in _INSIDE]


def hold_inside(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    cluster: str,
    provider_config_keys: Collection[str],
) -> None:
    """While the ClusterProviderConfigs' identity cannot be made (`Access.held`), what
    they authenticate is held: the ClusterProviderConfigs, and every Object and Release
    composed through them, are emitted as observed when they were emitted before
    (Crossplane deletes what a function stops emitting, and those run with the
    credentials they had), and not at all otherwise (a ClusterProviderConfig without
    its identity cannot reach the cluster, so nothing composed through it could
    work). A Usage naming an Object or Release that is then not emitted is held the
    same way; every other Usage, and everything in the cloud, is composed as usual.
    Call once everything else is composed."""
    desired = rsp.desired.resources
    bodies = {key: structs.pick(desired[key].resource, *_READ) for key in desired}
    inside = {key for key in provider_config_keys if key in desired}
    inside |= {key for key, body in bodies.items() if _through(body, cluster)}
    _hold(req, rsp, inside)
    emitted = {_named(structs.pick(desired[key].resource, *_READ)) for key in desired}
    orphaned = {
        key
        for key, body in bodies.items()
        if key not in inside and any(ref not in emitted for ref in _uses(body))
    }
    _hold(req, rsp, orphaned)
    for key in provider_config_keys:
        if key in desired:
            # A ProviderConfig has no status of its own: it is ready once it exists.
            desired[key].ready = fnv1.READY_TRUE


def _hold(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, keys: set[str]) -> None:
    """`keys` as observed, or not emitted when never observed."""
    for key in keys:
        del rsp.desired.resources[key]
    keep_observed(req, rsp, keys)
