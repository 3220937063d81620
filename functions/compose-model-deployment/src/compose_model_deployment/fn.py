"""The fleet scheduler as a composition function.

Fetch the whole fleet (every InferenceCluster and every ModelReplica, because
other deployments' replicas use capacity too), let the pure scheduler decide,
then compose exactly the replicas it decided on. Until the fleet has been
fetched nothing is decided and every replica composed before is re-emitted:
an unfetched fleet is not an empty one.
"""

from typing import Any

from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelReplica

from compose_model_deployment.replicas import (
    placements,
    refusal,
    replica_object,
    serving,
)
from modelplane.core.vocabulary import (
    API_VERSION,
    INFERENCE_CLUSTER,
    MODEL_REPLICA,
    REPLICAS_ACCEPTED,
    REPLICAS_READY,
    REPLICAS_SCHEDULED,
    Reason,
)
from modelplane.scheduling import (
    Decision,
    EventType,
    InputError,
    Origin,
    parse_clusters,
    parse_deployment,
    parse_replicas,
    schedule,
)
from modelplane.xfn import report, required
from modelplane.xfn.runner import (
    ComposeFunction,
    keep_observed,
    observed_composite,
    observed_resources,
)

CLUSTERS = "inferenceclusters"
REPLICAS = "modelreplicas"


class FunctionRunner(ComposeFunction):
    validity_condition = REPLICAS_SCHEDULED

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        deployment = observed_composite(req)
        # Requirements are the same on every call, so Crossplane's fetch loop settles.
        required.require_all(rsp, CLUSTERS, API_VERSION, INFERENCE_CLUSTER)
        required.require_all(rsp, REPLICAS, API_VERSION, MODEL_REPLICA)
        clusters = required.resolve(req, CLUSTERS)
        fleet_replicas = required.resolve(req, REPLICAS)
        observed = observed_resources(req)

        if not (clusters.resolved and fleet_replicas.resolved):
            keep_observed(req, rsp)
            report.set_condition(
                rsp,
                report.Condition(
                    REPLICAS_SCHEDULED, None, Reason.WAITING_FOR_FLEET, "waiting for the fleet"
                ),
            )
            return

        try:
            wanted = parse_deployment(deployment)
            decision = schedule(
                wanted,
                parse_clusters(clusters.items),
                parse_replicas(merge_replicas(fleet_replicas.items, observed)),
            )
        except InputError as error:
            keep_observed(req, rsp)
            report.warning(rsp, Reason.INVALID_SPEC, str(error))
            report.set_condition(
                rsp, report.Condition(REPLICAS_SCHEDULED, False, Reason.INVALID_SPEC, str(error))
            )
            return

        emit(req, rsp, deployment, wanted.replicas, decision, observed)


def merge_replicas(
    fleet: list[dict[str, Any]], observed: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The fleet's replicas, with this deployment's own as Crossplane observed them."""
    merged = {(r["metadata"].get("namespace", ""), r["metadata"]["name"]): r for r in fleet}
    for replica in observed.values():
        if replica.get("kind") == MODEL_REPLICA:
            metadata = replica["metadata"]
            merged[(metadata.get("namespace", ""), metadata["name"])] = replica
    return [merged[key] for key in sorted(merged)]


def emit(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    deployment: dict[str, Any],
    wanted: int,
    decision: Decision,
    observed: dict[str, dict[str, Any]],
) -> None:
    serving_now = {r.name: serving(observed.get(r.name)) for r in decision.replicas}
    held: set[str] = set()
    for replica in decision.replicas:
        if replica.origin is Origin.HELD and replica.name in observed:
            held.add(replica.name)
            continue
        desired = rsp.desired.resources[replica.name]
        # Through the generated model: never compose what our own XRD would reject.
        resource.update(desired, ModelReplica.model_validate(replica_object(deployment, replica)))
        desired.ready = fnv1.READY_TRUE if serving_now[replica.name] else fnv1.READY_FALSE
    # A replica the scheduler holds keeps exactly the spec it runs with.
    keep_observed(req, rsp, held)

    ready = sum(serving_now.values())
    rsp.desired.composite.resource.update(
        {
            "status": {
                "replicas": {"total": decision.placed, "ready": ready},
                "placements": placements(decision, serving_now),
                "matchTrace": decision.match_trace(),
            }
        }
    )
    if wanted > 0 and decision.placed == 0:
        # With nothing composed Crossplane would call the deployment Available.
        rsp.desired.composite.ready = fnv1.READY_FALSE

    condition = decision.condition
    report.set_condition(
        rsp, report.Condition(condition.type, condition.status, condition.reason, condition.message)
    )
    report.set_condition(rsp, ready_condition(ready, decision.placed, wanted))
    refusals = {r.name: refusal(observed.get(r.name)) for r in decision.replicas}
    report.set_condition(rsp, accepted_condition(refusals))
    for event in decision.events:
        if event.type is EventType.WARNING:
            report.warning(rsp, event.reason, event.message)
        else:
            report.normal(rsp, event.reason, event.message)


def accepted_condition(refusals: dict[str, str | None]) -> report.Condition:
    """Whether every replica's cluster accepted it. A replica refused at render time
    (a broken platform template, a disallowed priority) keeps running what it ran,
    so without this the deployment would look healthy while it can no longer change."""
    refused = [f"{name}: {why}" for name, why in sorted(refusals.items()) if why]
    if refused:
        return report.Condition(
            REPLICAS_ACCEPTED, False, Reason.REPLICAS_NOT_ACCEPTED, "; ".join(refused)
        )
    return report.Condition(
        REPLICAS_ACCEPTED, True, Reason.ALL_ACCEPTED, "no replica was refused by its cluster"
    )


def ready_condition(ready: int, placed: int, wanted: int) -> report.Condition:
    if ready == wanted and placed == wanted:
        return report.Condition(
            REPLICAS_READY, True, Reason.ALL_READY, f"{ready} of {wanted} replicas serving"
        )
    return report.Condition(
        REPLICAS_READY, False, Reason.REPLICAS_NOT_READY, f"{ready} of {wanted} replicas serving"
    )
