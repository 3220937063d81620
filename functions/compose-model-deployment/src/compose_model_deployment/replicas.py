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

from compose_model_deployment.endpoints import endpoint_key
from compose_model_deployment.kept import Kept, content_key
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


def compose_replica(desired: fnv1.Resource, composed: dict[str, Any], kept: Kept) -> None:
    """Set `desired` to the ModelReplica `composed`, through the generated model: never
    compose what our own XRD would reject. The Struct is built once per object
    (`Kept.structs`) and copied into an empty `desired`; `resource.update` of the
    validated model into an empty Struct gives exactly that Struct."""
    if desired.resource.fields:
        # Something is there already, which `update` merges with: built here.
        update_resource(desired, ModelReplica.model_validate(composed))
        return
    key = content_key(composed)
    built = kept.structs.get(key)
    if built is None:
        scratch = fnv1.Resource()
        update_resource(scratch, ModelReplica.model_validate(composed))
        built = scratch.resource
        kept.structs.put(key, built)
    desired.resource.CopyFrom(built)


def refusal(observed: dict[str, Any] | None) -> str | None:
    """Why an observed ModelReplica's cluster did not accept it, or None."""
    accepted = find_condition(observed, ACCEPTED)
    if accepted is None or accepted.status != "False":
        return None
    return f"{accepted.reason or ''}: {accepted.message or ''}"


def serving(observed: dict[str, Any] | None) -> bool:
    """Whether an observed ModelReplica reports its model serving."""
    return condition_is(observed, SERVING, "True")


class Statuses:
    """The observed composed resources' statuses as one call reads them, each read
    once: a deciding call asks whether the same replica serves up to three times
    (settled, running, emitted)."""

    def __init__(self, observed: dict[str, dict[str, Any]]) -> None:
        self.observed = observed
        self._problems: dict[str, str | None] = {}
        self._serves: dict[str, bool] = {}

    def problem(self, name: str) -> str | None:
        """Why the composed resource `name`'s status cannot be read, or None."""
        if name not in self._problems:
            self._problems[name] = conditions_problem(self.observed.get(name))
        return self._problems[name]

    def serves(self, name: str) -> bool:
        """Whether the composed ModelReplica `name` serves, as far as can be known.

        A status that cannot be read says nothing new, so what was composed from the
        last one stands (the hold rule for bad input): the replica serves while the
        ModelEndpoint composed only for a serving replica is still there. Reading it
        as not serving would drop that endpoint, and the route to a replica that may
        serve.
        """
        found = self._serves.get(name)
        if found is None:
            if self.problem(name) is not None:
                found = endpoint_key(name) in self.observed
            else:
                found = serving(self.observed.get(name))
            self._serves[name] = found
        return found


def unreadable_statuses(statuses: Statuses, serving_now: dict[str, bool]) -> list[str]:
    """A Warning's message for each placed replica whose status cannot be read."""
    messages: list[str] = []
    for name, serves_now in sorted(serving_now.items()):
        problem = statuses.problem(name)
        if problem is not None:
            held = "its ModelEndpoint is held" if serves_now else "it is read as not serving"
            messages.append(f"ModelReplica {name}: {problem}; {held} until it can be read")
    return messages


def serving_replicas(replicas: Required[ModelReplica]) -> frozenset[tuple[str, str]]:
    """(namespace, name) of each fetched ModelReplica whose `Serving` condition is True."""
    found: set[tuple[str, str]] = set()
    for replica in replicas.items:
        serving = first_condition(replica.status.conditions if replica.status else None, SERVING)
        if serving is not None and serving.status == "True" and replica.metadata is not None:
            found.add((replica.metadata.namespace or "", replica.metadata.name or ""))
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
