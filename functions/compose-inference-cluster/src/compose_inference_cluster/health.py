"""The `Reachable` condition: whether Modelplane still reaches the workload cluster.

Two kinds of evidence, read against now (`xfn.clock`: fixed by the render engine,
the wall clock in a control plane):

- the probes: the provider-kubernetes Objects this cluster composed (its
  prerequisite observers, its gateway), which tell whether its ProviderConfig
  connects at all;
- its replicas' Objects: those ModelReplicas compose through the same
  ProviderConfig, found by the `modelplane.ai/cluster` label they carry, which tell
  whether the cluster still takes what runs there (and are the only evidence on a
  cluster that composes no probe).

`fleet.health` judges each and combines them. A cluster that is not Reachable is
treated by the fleet scheduler as tainted NoExecute: its replicas are replaced
elsewhere, make-before-break.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.core.kinds.base import mapping
from modelplane.core.vocabulary import LABEL_CLUSTER, REACHABLE
from modelplane.fleet.health import assess, assess_replicas, combine, reason_for
from modelplane.xfn import clock, objects, report, required

REPLICA_OBJECTS = "replica-objects"
_READ = (("apiVersion",), ("kind",), ("spec", "providerConfigRef"), ("status", "conditions"))


def _is_object(obj: dict[str, Any]) -> bool:
    return obj.get("apiVersion") == objects.OBJECT_API_VERSION and obj.get("kind") == "Object"


def _through(obj: dict[str, Any], cluster: str) -> bool:
    """Whether an Object reaches the cluster through its ProviderConfig: the label is
    for selecting, the reference is what the provider uses."""
    ref = mapping(mapping(obj.get("spec")).get("providerConfigRef"))
    return ref.get("kind") == objects.CLUSTER_PROVIDER_CONFIG_KIND and ref.get("name") == cluster


def require_replica_objects(rsp: fnv1.RunFunctionResponse, cluster: str) -> None:
    """Ask for the replicas' Objects on this cluster, in every namespace."""
    required.require_labelled(
        rsp,
        REPLICA_OBJECTS,
        objects.OBJECT_API_VERSION,
        objects.OBJECT_KIND,
        {LABEL_CLUSTER: cluster},
    )


def replica_objects(req: fnv1.RunFunctionRequest, cluster: str) -> list[dict[str, Any]]:
    """The replicas' Objects on this cluster, in every namespace, once fetched
    (`require_replica_objects`, then `required.stop_unless_fetched`)."""
    # Only what health reads: a cluster may run thousands of Objects, each carrying
    # its manifest twice (desired, and as the provider read it back).
    found = required.resolve_fields(req, REPLICA_OBJECTS, *_READ)
    return [obj for obj in found.items if _is_object(obj) and _through(obj, cluster)]


def report_reachable(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    observed: dict[str, dict[str, Any]],
    cluster: str,
) -> None:
    """Set `Reachable` from the observed Objects this cluster and its replicas composed."""
    now = clock.now(req)
    probes = [obj for _, obj in sorted(observed.items()) if _is_object(obj)]
    health = combine(assess(probes, now), assess_replicas(replica_objects(req, cluster), now))
    report.set_condition(
        rsp, report.Condition(REACHABLE, health.reachable, reason_for(health), health.message)
    )
