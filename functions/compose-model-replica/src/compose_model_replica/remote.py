"""From rendered remote objects to the provider-kubernetes Objects that carry them."""

from collections.abc import Mapping
from typing import Any

from modelplane.core.kinds import HTTP_ROUTE
from modelplane.core.naming import hashed_name
from modelplane.core.observed import read_back
from modelplane.core.vocabulary import LABEL_CLUSTER, LABEL_DEPLOYMENT, LABEL_REPLICA
from modelplane.workloads import RemoteObject, RenderedReplica, ReplicaInput
from modelplane.workloads.traffic import ROUTE_KEY
from modelplane.xfn import objects

GANG_KEY_PREFIX = "gang-"


def gang_object(manifest: dict[str, Any]) -> RemoteObject:
    """A gang object, under a key stable across renders (its kind and name)."""
    kind = manifest["kind"].lower()
    return RemoteObject(
        key=f"{GANG_KEY_PREFIX}{kind}-{manifest['metadata']['name']}", manifest=manifest
    )


def remote_objects(replica: RenderedReplica, gangs: list[dict[str, Any]]) -> list[RemoteObject]:
    """Everything the replica puts on its cluster, sorted by key: its rendered objects
    (with the workloads as the conventions handed them back) and its gang objects."""
    return sorted([*replica.objects(), *map(gang_object, gangs)], key=lambda o: o.key)


def object_name(replica: str, key: str) -> str:
    """The Object's name in the replica's namespace: unique per (replica, key)."""
    return hashed_name(f"{replica}-{key}", replica, key)


def wrap_all(
    remote: list[RemoteObject],
    replica: ReplicaInput,
    provider_config: dict[str, str],
) -> dict[str, dict[str, Any]]:
    name = replica.name
    # The cluster label is how the InferenceCluster finds the Objects that go through
    # its ProviderConfig, to judge its health by them as well as by its own.
    labels = {
        LABEL_DEPLOYMENT: replica.deployment_name,
        LABEL_REPLICA: name,
        LABEL_CLUSTER: replica.cluster_name,
    }
    return {
        o.key: objects.wrap(
            object_name(name, o.key),
            o.manifest,
            provider_config,
            readiness=o.readiness,
            labels=labels,
            management_policies=o.management_policies,
        )
        for o in remote
    }


def remote_observed(observed: dict[str, Any] | None) -> dict[str, Any] | None:
    """What provider-kubernetes read back from the cluster for an Object (None when it
    has not, or when what it holds is not an object)."""
    return read_back(observed)


def route_verdict(
    remote: list[RemoteObject], observed: Mapping[str, dict[str, Any]]
) -> tuple[bool, str] | None:
    """Whether the replica's path HTTPRoute on its cluster's Gateway routes (every parent
    `Accepted` and `ResolvedRefs`), and why; None for a replica without one (its
    cluster declares no gateway). Its hub route is not waited for: until that routes,
    the hub's requests reach the replica through the path route's header rule, so a
    replica serving before its hub route existed keeps serving (and its traffic)."""
    if not any(o.key == ROUTE_KEY for o in remote):
        return None
    return HTTP_ROUTE.serving(remote_observed(observed.get(ROUTE_KEY)))
