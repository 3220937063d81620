"""Observed prerequisites: one Observe-only provider-kubernetes Object per prerequisite.

Each Object reads one object on the workload cluster and changes nothing there
(`managementPolicies: ["Observe"]`). What they find becomes `status.stack`:
`missing` lists every prerequisite observed absent with the scope of replicas it
keeps away (the fleet scheduler reads it), `checked` counts those observed at
all. An Object is ready when its object exists, so a cluster lacking something
is not Ready. While the replicas on the cluster are not all known (one
unreadable) or its tenancy cannot place them, every Observe Object
composed before is kept: an unknown is not an absence.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.naming import hashed_name
from modelplane.core.refs import ObjectRef
from modelplane.stack import Prerequisite, Scope, Seen, seen
from modelplane.xfn import objects, structs
from modelplane.xfn.runner import keep_observed

OBSERVE_PREFIX: Final = "observe-"
# How StackReady names who needs a missing prerequisite.
_WHO: Final = {
    Scope.CLUSTER: "every replica",
    Scope.MULTI_NODE: "multi-node replicas",
    Scope.DEVICE_CLASS: "replicas claiming its devices",
    Scope.PRIORITY: "replicas at that priority",
    Scope.NAMESPACE: "replicas from namespace {tenant}",
    Scope.REPLICA: "the replicas using it",
}


def prerequisite_key(prerequisite: Prerequisite) -> str:
    return observer_key(prerequisite.ref)


def observer_key(ref: ObjectRef) -> str:
    """The key of the Observe Object that reads `ref`."""
    where = f"{ref.namespace}-" if ref.namespace else ""
    return f"{OBSERVE_PREFIX}{ref.kind.lower()}-{where}{ref.name}"


@dataclass
class Findings:
    """What the Observe Objects found: the absent ones, the unknown, and how many exist."""

    missing: list[tuple[Prerequisite, str]] = field(default_factory=list[tuple[Prerequisite, str]])
    unknown: list[Prerequisite] = field(default_factory=list[Prerequisite])
    present: int = 0

    @property
    def checked(self) -> int:
        return self.present + len(self.missing)

    def status(self) -> dict[str, Any]:
        """`status.stack`."""
        missing: list[dict[str, Any]] = []
        for prerequisite, _ in self.missing:
            ref = prerequisite.ref
            entry: dict[str, Any] = {"apiVersion": ref.api_version, "kind": ref.kind}
            entry["name"] = ref.name
            if ref.namespace:
                entry["namespace"] = ref.namespace
            entry["scope"] = prerequisite.scope.value
            if prerequisite.tenant:
                entry["tenant"] = prerequisite.tenant
            missing.append(entry)
        return {"checked": self.checked, "missing": missing}

    def describe_missing(self) -> str:
        return "; ".join(
            f"{p.ref.describe()} (needed by {_WHO[p.scope].format(tenant=p.tenant)})"
            for p, _ in self.missing
        )


def compose_observer(
    rsp: fnv1.RunFunctionResponse, key: str, name: str, ref: ObjectRef, cluster: str, namespace: str
) -> None:
    """Compose, under `key`, an Observe-only Object called `name` reading `ref` through
    the cluster's ClusterProviderConfig."""
    provider = {"kind": objects.CLUSTER_PROVIDER_CONFIG_KIND, "name": cluster}
    structs.update(
        rsp.desired.resources[key].resource,
        objects.wrap(
            name,
            ref.manifest(),
            provider,
            management_policies=objects.OBSERVE_ONLY,
            namespace=namespace,
        ),
    )


def observe(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    observed: Mapping[str, Any],
    *,
    cluster: str,
    namespace: str,
    prerequisites: Sequence[Prerequisite],
    complete: bool,
) -> Findings:
    """Compose an Observe Object per prerequisite and read what each found.

    `complete` is False while the replicas on the cluster are not all known: the
    Observe Objects composed before are then kept.
    """
    findings = Findings()
    for prerequisite in prerequisites:
        key = prerequisite_key(prerequisite)
        if key in rsp.desired.resources:
            continue
        ref = prerequisite.ref
        name = hashed_name(
            f"{cluster}-{ref.kind.lower()}", cluster, ref.group, ref.kind, ref.namespace, ref.name
        )
        compose_observer(rsp, key, name, ref, cluster, namespace)
        state, message = seen(observed.get(key))
        rsp.desired.resources[key].ready = (
            fnv1.READY_TRUE if state is Seen.PRESENT else fnv1.READY_FALSE
        )
        if state is Seen.PRESENT:
            findings.present += 1
        elif state is Seen.ABSENT:
            findings.missing.append((prerequisite, message))
        else:
            findings.unknown.append(prerequisite)
    if not complete:
        keep_observed(req, rsp, {k for k in observed if k.startswith(OBSERVE_PREFIX)})
    return findings
