"""The ModelReplica objects a scheduling decision composes, and the status it reports.

Pure functions of the decision, the deployment's model and the observed
replicas, so the function body stays a short story: fetch, decide, emit, report.
"""

from typing import Any

from modelplane_models import ModelDeployment, ModelReplica
from modelplane_models.model_deployment import Placement, Workers

from compose_model_deployment.endpoints import endpoint_key
from modelplane.core.observed import (
    condition_is,
    conditions_problem,
    find_condition,
    first_condition,
)
from modelplane.core.vocabulary import (
    ACCEPTED,
    ANNOTATION_REVISION,
    API_VERSION,
    LABEL_MODEL_CACHE,
    MODEL_REPLICA,
    SERVING,
)
from modelplane.scheduling import UNIFIED_ROLE, Decision, DesiredReplica
from modelplane.xfn.required import Required


def role_template(deployment: ModelDeployment, role: str) -> dict[str, Any]:
    """The pod template of one role, exactly as the deployment gives it."""
    spec = deployment.spec
    workers: Workers | None = None
    if spec is not None:
        if role == UNIFIED_ROLE:
            workers = spec.workers
        else:
            disaggregated = getattr(spec, role)
            workers = None if disaggregated is None else disaggregated.workers
    if workers is None:
        return {}
    return workers.template.model_dump(
        mode="json", exclude_unset=True, by_alias=True, warnings=False
    )


def replica_object(
    deployment: ModelDeployment, replica: DesiredReplica, revision: str
) -> dict[str, Any]:
    """The ModelReplica for a retained or newly placed replica, from the current spec.

    Its labels say where it runs, for people and selectors; the scheduler reads a
    replica's identity from its spec and from Crossplane, never from them. Its
    revision annotation records which revision of the deployment it renders, so a
    rollout knows which replicas it has reached.
    """
    name = deployment.metadata.name if deployment.metadata else None
    spec: dict[str, Any] = {
        "deploymentName": name,
        "clusterName": replica.cluster,
        "index": replica.index,
    }
    priority = deployment.spec.priority if deployment.spec else None
    if priority:
        spec["priority"] = priority
    model = deployment.spec.model if deployment.spec else None
    labels = replica.placement_labels(name or "")
    if model is not None:
        # The served name resolved here, so every replica renders the same one.
        source: dict[str, Any] = {"name": model.name or name}
        if model.uri:
            source["uri"] = model.uri
        spec["model"] = source
        if model.cacheRef is not None:
            source["cacheRef"] = {"name": model.cacheRef.name}
            # How the ModelCache finds the clusters it is used on.
            labels[LABEL_MODEL_CACHE] = model.cacheRef.name
    for role in replica.roles:
        spec[role.role] = {**role.as_dict(), "template": role_template(deployment, role.role)}
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_REPLICA,
        "metadata": {
            "name": replica.name,
            "labels": labels,
            "annotations": {ANNOTATION_REVISION: revision},
        },
        "spec": spec,
    }


def refusal(observed: dict[str, Any] | None) -> str | None:
    """Why an observed ModelReplica's cluster did not accept it, or None."""
    accepted = find_condition(observed, ACCEPTED)
    if accepted is None or accepted.status != "False":
        return None
    return f"{accepted.reason or ''}: {accepted.message or ''}"


def serving(observed: dict[str, Any] | None) -> bool:
    """Whether an observed ModelReplica reports its model serving."""
    return condition_is(observed, SERVING, "True")


def serves(observed: dict[str, dict[str, Any]], name: str) -> bool:
    """Whether the composed ModelReplica `name` serves, as far as can be known.

    A status that cannot be read says nothing new, so what was composed from the
    last one stands (the hold rule for bad input): the replica serves while the
    ModelEndpoint composed only for a serving replica is still there. Reading it as
    not serving would drop that endpoint, and the route to a replica that may serve.
    """
    obj = observed.get(name)
    if conditions_problem(obj) is not None:
        return endpoint_key(name) in observed
    return serving(obj)


def unreadable_statuses(
    observed: dict[str, dict[str, Any]], serving_now: dict[str, bool]
) -> list[str]:
    """A Warning's message for each placed replica whose status cannot be read."""
    messages: list[str] = []
    for name, serves_now in sorted(serving_now.items()):
        problem = conditions_problem(observed.get(name))
        if problem is not None:
            held = "its ModelEndpoint is held" if serves_now else "it is read as not serving"
            messages.append(f"ModelReplica {name}: {problem}; {held} until it can be read")
    return messages


def serving_replicas(replicas: Required[ModelReplica]) -> set[tuple[str, str]]:
    """(namespace, name) of each fetched ModelReplica whose `Serving` condition is True."""
    found: set[tuple[str, str]] = set()
    for replica in replicas.items:
        serving = first_condition(replica.status.conditions if replica.status else None, SERVING)
        if serving is not None and serving.status == "True" and replica.metadata is not None:
            found.add((replica.metadata.namespace or "", replica.metadata.name or ""))
    return found


def placements(decision: Decision, serving_now: dict[str, bool]) -> list[Placement]:
    return [
        Placement(
            replica=replica.name,
            cluster=replica.cluster,
            index=replica.index,
            pools={role.role: role.pool for role in replica.roles},
            serving=serving_now[replica.name],
        )
        for replica in decision.replicas
    ]
