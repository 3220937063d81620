"""The ModelReplica objects a scheduling decision composes, and the status it reports.

Pure functions of the decision, the deployment's model and the observed
replicas, so the function body stays a short story: fetch, decide, emit, report.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Callable
from typing import Any, cast

from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import ModelDeployment, ModelReplica
from modelplane_models.model_deployment import Placement, Workers
from pydantic import BaseModel

from compose_model_deployment.kept import Kept
from modelplane.core.applied import served_as_last_read
from modelplane.core.observed import (
    first_condition,
)
from modelplane.core.vocabulary import (
    ANNOTATION_BACKEND,
    ANNOTATION_REVISION,
    API_VERSION,
    LABEL_MODEL_CACHE,
    MODEL_REPLICA,
    ConditionType,
)
from modelplane.core.written import as_written
from modelplane.scheduling import UNIFIED_ROLE, Decision, DesiredReplica
from modelplane.xfn.required import Required

# The SDK's resource.update, typed for the one source used here (its signature
# says a bare `dict`).
update_resource = cast(
    Callable[[fnv1.Resource, BaseModel], None],
    resource.update,  # pyright: ignore[reportUnknownMemberType]
)


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
    return as_written(workers.template)


def replica_object(
    deployment: ModelDeployment, replica: DesiredReplica, revision: str
) -> dict[str, Any]:
    """The ModelReplica for a retained or newly placed replica, from the current spec.

    Its labels say where it runs, for people and selectors; the scheduler reads a
    replica's identity from its spec and from Crossplane, never from them. Its
    revision annotation records which revision of the deployment it renders, so a
    rollout knows which replicas it has reached; its backend annotation, the backend it
    renders with, so another backend on its cluster replaces it (`scheduling.moves`).
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
    annotations = {ANNOTATION_REVISION: revision}
    if replica.backend:
        annotations[ANNOTATION_BACKEND] = replica.backend
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_REPLICA,
        "metadata": {
            "name": replica.name,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }


def compose_replica(desired: fnv1.Resource, composed: dict[str, Any], kept: Kept) -> None:
    """Set `desired` to the ModelReplica `composed`, through the generated model: never
    compose what our own XRD would reject. Built once per object (`Kept.compose`)."""
    kept.compose(desired, MODEL_REPLICA, composed, _validated)


def _validated(desired: fnv1.Resource, composed: dict[str, Any]) -> None:
    update_resource(desired, ModelReplica.model_validate(composed))


def serving_replicas(replicas: Required[ModelReplica]) -> frozenset[tuple[str, str]]:
    """(namespace, name) of each fetched ModelReplica that serves the revision it carries
    now, as last read (`statuses.serving`)."""
    found: set[tuple[str, str]] = set()
    for replica in replicas.items:
        status, metadata = replica.status, replica.metadata
        if metadata is None:
            continue
        serving = first_condition(status.conditions if status else None, ConditionType.SERVING)
        revision = (metadata.annotations or {}).get(ANNOTATION_REVISION)
        if served_as_last_read(serving, status.servingRevision if status else None, revision):
            found.add((metadata.namespace or "", metadata.name or ""))
    return frozenset(found)


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
