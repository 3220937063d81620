"""What the rest of the cluster would do: providers, and which kinds are cluster-scoped.

The engine runs no providers. A managed resource a composite composes is taken as
applied and healthy the round after it appears (or changes): Ready and Synced,
and a provider-kubernetes Object reports back the manifest it wraps with the
status a healthy workload of that kind would show, so functions that derive
readiness from it see what they would see on a working cluster. A model cache's
download (a Job, a LocalModelNamespaceCache) reports itself downloading for a round first,
then done, so a preview shows a cold first placement and a warm second one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from modelplane.caching.progress import is_download, simulated_status
from modelplane.core.kinds import workload_kind
from modelplane_cli.render.clouds import at_provider
from modelplane_cli.render.world import Obj, View, clone, group_of

# Groups whose kinds are managed resources reconciled by a provider.
_PROVIDER_GROUP_SUFFIXES = (".crossplane.io", ".upbound.io")
# Crossplane's own groups under crossplane.io: nothing there is a managed resource.
_CROSSPLANE_CORE_GROUPS = frozenset(
    {
        "apiextensions.crossplane.io",
        "pkg.crossplane.io",
        "protection.crossplane.io",
        "ops.crossplane.io",
    }
)
# Provider configuration kinds: applied, but no provider reports status on them.
_CONFIG_KINDS = frozenset(
    {"ProviderConfig", "ClusterProviderConfig", "ProviderConfigUsage", "ClusterProviderConfigUsage"}
)
# provider-kubernetes, legacy and namespaced: its Object wraps a manifest for a workload cluster.
OBJECT_GROUPS = frozenset({"kubernetes.crossplane.io", "kubernetes.m.crossplane.io"})

# Kinds the API server serves cluster-scoped, which a namespaced composite may not compose.
# Legacy (cluster-scoped) provider groups are matched whole by _CLUSTER_SCOPED_GROUPS.
_CLUSTER_SCOPED_KINDS = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("storage.k8s.io", "StorageClass"),
        ("resource.k8s.io", "DeviceClass"),
        ("kubernetes.m.crossplane.io", "ClusterProviderConfig"),
        ("helm.m.crossplane.io", "ClusterProviderConfig"),
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("kueue.x-k8s.io", "ResourceFlavor"),
        ("kueue.x-k8s.io", "WorkloadPriorityClass"),
        ("scheduling.run.ai", "Queue"),
        ("scheduling.volcano.sh", "Queue"),
    }
)
_CLUSTER_SCOPED_GROUPS = frozenset({"kubernetes.crossplane.io", "helm.crossplane.io"})


def is_cluster_scoped(api_version: str, kind: str) -> bool:
    group = group_of(api_version)
    return (group, kind) in _CLUSTER_SCOPED_KINDS or group in _CLUSTER_SCOPED_GROUPS


def is_managed(api_version: str, kind: str) -> bool:
    """Whether a provider would reconcile this kind and report Ready/Synced on it."""
    group = group_of(api_version)
    if group in _CROSSPLANE_CORE_GROUPS or kind in _CONFIG_KINDS:
        return False
    return group.endswith(_PROVIDER_GROUP_SUFFIXES)


def has_conditions(obj: View) -> bool:
    return bool((obj.get("status") or {}).get("conditions"))


def provider_status(obj: View) -> Obj:
    """`obj` as its provider leaves it after a successful reconcile.

    Only the top level and the status are new (what it reports of a manifest is a
    copy, `healthy`); the rest is `obj`'s, which the store keeps as it is."""
    out: Obj = dict(obj)
    status: Obj = dict(out.get("status") or {})
    conditions = [
        c for c in status.get("conditions") or [] if c.get("type") not in ("Ready", "Synced")
    ]
    conditions.append({"type": "Ready", "status": "True", "reason": "Available"})
    conditions.append({"type": "Synced", "status": "True", "reason": "ReconcileSuccess"})
    status["conditions"] = conditions
    if group_of(str(obj.get("apiVersion", ""))) in OBJECT_GROUPS and obj.get("kind") == "Object":
        manifest = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest")
        if isinstance(manifest, Mapping):
            reported: Obj = dict(status.get("atProvider") or {})
            reported["manifest"] = healthy(manifest, target_of(obj))
            status["atProvider"] = reported
    cloud = at_provider(obj)
    if cloud is not None:
        status["atProvider"] = {k: v for k, v in cloud.items() if v is not None}
    out["status"] = status
    return out


# What provider-kubernetes reports back for a Secret's data when it runs with
# `--sanitize-secrets`, as Modelplane installs it (install/providers): the data
# never lands in the Object's status (v1.2.1 internal/controller/namespaced/object
# `setAtProvider`, which sets it on every v1 Secret, whatever the manifest holds).
SANITIZED_SECRET_DATA: Final[Mapping[str, None]] = {"redacted": None}


def healthy(manifest: Mapping[str, Any], target: str = "") -> Obj:
    """A wrapped manifest with the status its controller reports once it is serving,
    on the cluster its Object's ProviderConfig (`target`) reaches; a Secret's data
    redacted, as the installed provider reports it."""
    out = clone(dict(manifest))
    if out.get("apiVersion") == "v1" and out.get("kind") == "Secret":
        out["data"] = dict(SANITIZED_SECRET_DATA)
    kind = workload_kind(manifest)
    if kind is not None:
        out["status"] = kind.healthy_status_on(out, target)
    elif is_download(manifest):
        # A model cache's download, done (`downloading` shows it under way).
        out["status"] = simulated_status(manifest, done=True)
    return out


def with_generation(obj: Obj, generation: int) -> Obj:
    """`obj` (an Object) whose read-back, when its kind's controller publishes
    `status.observedGeneration`, carries `metadata.generation` as the API server
    counts it and the status its controller wrote for that generation: what a real
    provider reads back once the controller has caught up. Only the path down to
    the read-back's metadata and status is new."""
    status: Obj = obj.get("status") or {}
    at: Obj = status.get("atProvider") or {}
    manifest = at.get("manifest")
    kind = workload_kind(manifest) if isinstance(manifest, Mapping) else None
    if not isinstance(manifest, Mapping) or kind is None or not kind.observes_generation:
        return obj
    read: Obj = dict(cast(Mapping[str, Any], manifest))
    read["metadata"] = {**(read.get("metadata") or {}), "generation": generation}
    read["status"] = {**(read.get("status") or {}), "observedGeneration": generation}
    return {**obj, "status": {**status, "atProvider": {**at, "manifest": read}}}


def read_generation(status: object) -> int | None:
    """The `metadata.generation` an Object's status (`status`) reads back, if any."""
    at = status.get("atProvider") if isinstance(status, Mapping) else None
    manifest = at.get("manifest") if isinstance(at, Mapping) else None
    metadata = manifest.get("metadata") if isinstance(manifest, Mapping) else None
    found = metadata.get("generation") if isinstance(metadata, Mapping) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def downloading(obj: View) -> Obj:
    """An Object wrapping a model cache's download, applied and still downloading."""
    out = provider_status(obj)
    status: Obj = out.get("status") or {}
    at_provider: Obj = status.get("atProvider") or {}
    manifest = at_provider.get("manifest")
    if isinstance(manifest, dict):
        # Replaced, not changed in place: what is not new in `out` is `obj`'s own.
        downloading: Obj = {**manifest, "status": simulated_status(manifest, done=False)}
        out["status"] = {**status, "atProvider": {**at_provider, "manifest": downloading}}
    return out


def is_download_object(obj: View) -> bool:
    """Whether an Object wraps a model cache's download (a Job or a LocalModelNamespaceCache)."""
    if group_of(str(obj.get("apiVersion", ""))) not in OBJECT_GROUPS or obj.get("kind") != "Object":
        return False
    manifest = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest")
    return isinstance(manifest, Mapping) and is_download(manifest)


def target_of(obj: View) -> str:
    """The name of the ProviderConfig an Object's manifest is applied through."""
    ref = (obj.get("spec") or {}).get("providerConfigRef")
    name = ref.get("name") if isinstance(ref, Mapping) else None
    return name if isinstance(name, str) else ""
