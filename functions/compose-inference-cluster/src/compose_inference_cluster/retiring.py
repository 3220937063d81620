"""Releases a Managed stack no longer plans, retired without ever wedging the cluster.

A scheduler or backend switch drops releases from the plan while ModelReplicas
still run on the cluster. Crossplane v2.3 (`internal/controller/apiextensions/
composite/composition_functions.go`) garbage-collects what a function stops
desiring before it applies anything, and returns on the first failed delete; its
`nousages` webhook (`internal/webhook/protection/usage/handler.go`) refuses with
409 the deletion of any object a Usage names; a Conflict is requeued silently. So
a Release that left the desired state together with the Usages protecting it
would be refused on every reconcile, and nothing else of the cluster would ever
be applied again, with Synced still True.

Worse, a composed Usage being deleted keeps its finalizer until its `by` object is
gone (`internal/controller/protection/usage/reconciler.go`: "Using resource is
still there, so we need to wait for it to be deleted"), and a replica's Usage
cannot drop `by` (its `of` is in another namespace, which the Usage CRD allows
only with `by`). A Usage a ModelReplica holds therefore lasts as long as that
replica, whatever the function desires.

Hence the rule, one reconcile at a time:

- a replica's Usage of a release is kept while that replica is still placed on
  the cluster (or the replicas cannot all be read); once the replica is gone it
  is dropped, and its deletion completes at once;
- an ordering Usage (a release used by its dependent) is kept while its dependent
  release is still desired or still exists;
- a release composed before and no longer planned is kept, as it runs, while any
  Usage that exists names it, and dropped in the reconcile after the last one
  went: Usages leave first, the Release in a later reconcile, so its deletion is
  never refused.

The old scheduler or backend thus stays installed until the replicas placed while
it was needed have been replaced; `StackReady` says which releases are retiring.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.kinds.base import mapping
from modelplane.xfn.runner import keep_observed


@dataclass(frozen=True)
class UsageSeen:
    """An observed Usage: the Release it protects and who uses it."""

    key: str
    namespace: str
    of: str
    by_kind: str
    by_name: str


def _usage(key: str, obj: Mapping[str, Any]) -> UsageSeen:
    spec = mapping(obj.get("spec"))
    of = mapping(mapping(spec.get("of")).get("resourceRef"))
    by = mapping(spec.get("by"))
    return UsageSeen(
        key=key,
        namespace=str(mapping(obj.get("metadata")).get("namespace", "")),
        of=str(of.get("name", "")),
        by_kind=str(by.get("kind", "")),
        by_name=str(mapping(by.get("resourceRef")).get("name", "")),
    )


def retire(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    *,
    release_keys: Mapping[str, str],
    usage_prefix: str,
    replica_usage_prefix: str,
    release_prefix: str,
    placed: Set[tuple[str, str]],
    keep_replica_usages: bool,
) -> list[str]:
    """Keep what the rule above keeps; return the names (Release `metadata.name`) of
    the releases kept though no longer planned, sorted.

    `release_keys` maps each desired Release's `metadata.name` to its key, `placed`
    holds the (namespace, name) of every replica placed on the cluster.
    """
    usages = [_usage(k, v) for k, v in sorted(observed.items()) if k.startswith(usage_prefix)]
    existing_releases = {
        str(mapping(v.get("metadata")).get("name", "")): k
        for k, v in observed.items()
        if k.startswith(release_prefix)
    }
    desired_releases = dict(release_keys)
    kept_usages: set[str] = set()
    for usage in usages:
        if usage.key in rsp.desired.resources:
            continue
        if usage.key.startswith(replica_usage_prefix):
            keep = keep_replica_usages or (usage.namespace, usage.by_name) in placed
        else:
            keep = usage.by_name in desired_releases or usage.by_name in existing_releases
        if keep:
            kept_usages.add(usage.key)
    for key in keep_observed(req, rsp, kept_usages):
        # Usages have no readiness of their own: one that exists is ready.
        rsp.desired.resources[key].ready = fnv1.READY_TRUE
    # Every Usage that exists now, kept or dropped this reconcile, still protects its
    # release: a release leaves only once none names it any more.
    protected = {usage.of for usage in usages}
    retiring = sorted(
        name
        for name, key in existing_releases.items()
        if name not in desired_releases and key not in rsp.desired.resources and name in protected
    )
    keep_observed(req, rsp, {existing_releases[name] for name in retiring})
    return retiring
