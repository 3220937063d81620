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

When every Object of a kind began failing is the function's own record, in
`status.reachability` (a function keeps no state of its own): read back from the
observed composite, handed to `fleet.health`, and published again while they keep
failing. A value there that does not read as a time is taken as absent, with a
Warning naming the field: the grace then starts from the Objects' own times again.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster
from modelplane_models.inference_cluster import ReachabilityStatus

from modelplane.core.kinds.base import mapping
from modelplane.core.observed import find_condition
from modelplane.core.vocabulary import LABEL_CLUSTER, ConditionType, Reason
from modelplane.fleet.health import (
    assess,
    assess_replicas,
    combine,
    format_time,
    parse_time,
    reason_for,
)
from modelplane.xfn import clock, objects, report, required

REPLICA_OBJECTS = "replica-objects"
_READ = (("apiVersion",), ("kind",), ("spec", "providerConfigRef"), ("status", "conditions"))


# crossplane-runtime's Ready reason while a managed resource's external resource is
# first being created (`xpv1.Creating()`).
_CREATING: Final = "Creating"


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


_FIELDS = ("objectsFailingSince", "replicaObjectsFailingSince")


def drop_unreadable_reachability(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse
) -> None:
    """Remove from the observed composite a `status.reachability` (or a field of it) of
    another shape than this function writes, with a Warning naming it, before the
    composite is read: the API server's schema keeps that from happening, but a
    world written by hand may not, and the whole cluster must not become unreadable
    (nor keep re-publishing the bad value) for a field whose absence is harmless."""
    resource = req.observed.composite.resource
    if "status" not in resource.fields or not resource.fields["status"].HasField("struct_value"):
        return
    status = resource.fields["status"].struct_value
    if "reachability" not in status.fields:
        return
    value = status.fields["reachability"]
    if not value.HasField("struct_value"):
        del status.fields["reachability"]
        _unreadable(rsp, "status.reachability", "is not an object")
        return
    for name in sorted(value.struct_value.fields):
        if name not in _FIELDS:
            _unreadable(rsp, f"status.reachability.{name}", "is not a field Modelplane writes")
        elif not value.struct_value.fields[name].HasField("string_value"):
            _unreadable(rsp, f"status.reachability.{name}", "is not a string")
        else:
            continue
        del value.struct_value.fields[name]


def _unreadable(rsp: fnv1.RunFunctionResponse, field: str, why: str) -> None:
    report.warning(
        rsp,
        Reason.REACHABILITY_UNREADABLE,
        f"{field} {why}; taken as absent, so the grace is measured from the Objects' own "
        "transition times",
    )


def _carried(rsp: fnv1.RunFunctionResponse, field: str, value: str | None) -> datetime | None:
    """A start this function published before, or None; a Warning when it does not read."""
    if value is None:
        return None
    since = parse_time(value)
    if since is None:
        report.warning(
            rsp,
            Reason.REACHABILITY_UNREADABLE,
            f"status.reachability.{field}: {value!r} is not an RFC 3339 time; taken as "
            "absent, so the grace is measured from the Objects' own transition times",
        )
    return since


def being_created(
    observed: Mapping[str, Any], connection: str, composite: InferenceCluster
) -> bool:
    """Whether a created cluster is still being created for the first time: it has
    never been judged reachable or unreachable (`never_reached`) and its kubeconfig
    writer (`connection`, its composition resource name) is not observed, has no Ready
    condition yet, or is Ready False with crossplane-runtime's `Creating` reason.

    `Creating` alone does not say "first": crossplane-runtime sets it whenever the
    provider observes no external resource and creates one, so also for a cluster
    deleted or lost out of band, whose outage must be reported (on GKE the writer is
    the `Cluster` itself). What tells a first creation apart is the composite's own
    record: once its Objects have been judged, it is never new again."""
    if not never_reached(composite):
        return False
    found = find_condition(observed.get(connection), "Ready")
    return found is None or (found.status != "True" and found.reason == _CREATING)


# The reasons of a verdict on the cluster's Objects (`modelplane.fleet.health`); any
# other Reachable reason is no verdict: `Provisioning` before the kubeconfig exists, or
# Crossplane's own `FatalError`, which v2.3 writes over every condition the pipeline
# did not return when a reconcile fails (composite/reconciler.go).
_VERDICTS = frozenset(
    {
        Reason.CLUSTER_REACHABLE,
        Reason.CLUSTER_UNREACHABLE,
        Reason.SYNC_FAILING,
        Reason.REPLICA_OBJECTS_FAILING,
    }
)


def never_reached(composite: InferenceCluster) -> bool:
    """Whether the composite carries no judgement of its Objects: no outage start in
    `status.reachability`, and a Reachable condition that is absent or gives no
    verdict (`_VERDICTS`)."""
    status = composite.status
    if status is None:
        return True
    if status.reachability is not None and (
        status.reachability.objectsFailingSince or status.reachability.replicaObjectsFailingSince
    ):
        return False
    said = next((c for c in status.conditions or () if c.type == ConditionType.REACHABLE), None)
    return said is None or said.reason not in _VERDICTS


def report_reachable(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    observed: dict[str, dict[str, Any]],
    composite: InferenceCluster,
    kubeconfig_writer: str = "",
) -> ReachabilityStatus | None:
    """Set `Reachable` from the observed Objects this cluster and its replicas composed,
    and return what `status.reachability` publishes (None: nothing fails). On a cluster
    Modelplane creates (`kubeconfig_writer` names that resource's key) that is still being
    created for the first time (`being_created`), Reachable is Unknown (`Provisioning`)
    and no outage is dated: its Objects cannot connect before its kubeconfig exists,
    which takes EKS 10 to 15 minutes, and no replica runs there to move. A cluster
    re-created after it was lost is judged as any other: its outage is reported."""
    if kubeconfig_writer and being_created(observed, kubeconfig_writer, composite):
        message = "the cluster is being created; its kubeconfig is not written yet"
        report.set_condition(
            rsp, report.Condition(ConditionType.REACHABLE, None, Reason.PROVISIONING, message)
        )
        return None
    now = clock.now(req)
    name = (composite.metadata.name if composite.metadata else None) or ""
    before = composite.status.reachability if composite.status else None
    objects_since = _carried(
        rsp, "objectsFailingSince", before.objectsFailingSince if before else None
    )
    replicas_since = _carried(
        rsp, "replicaObjectsFailingSince", before.replicaObjectsFailingSince if before else None
    )
    probes = [obj for _, obj in sorted(observed.items()) if _is_object(obj)]
    connection = assess(probes, now, objects_since)
    replicas = assess_replicas(replica_objects(req, name), now, replicas_since)
    health = combine(connection, replicas)
    report.set_condition(
        rsp,
        report.Condition(
            ConditionType.REACHABLE, health.reachable, reason_for(health), health.message
        ),
    )
    replicas_began = replicas.since if replicas is not None else None
    if connection.since is None and replicas_began is None:
        return None
    return ReachabilityStatus(
        objectsFailingSince=format_time(connection.since) if connection.since else None,
        replicaObjectsFailingSince=format_time(replicas_began) if replicas_began else None,
    )
