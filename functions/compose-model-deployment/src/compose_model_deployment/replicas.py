"""The ModelReplica objects a scheduling decision composes, and the status it reports.

Pure functions of the decision, the deployment's model and the observed
replicas, so the function body stays a short story: fetch, decide, emit, report.
"""

from typing import Any, cast

from crossplane.function.proto.v1.run_function_pb2 import RunFunctionRequest
from google.protobuf.struct_pb2 import Struct
from modelplane_models import ModelDeployment
from modelplane_models.model_deployment import Workers

from compose_model_deployment.endpoints import endpoint_key
from modelplane.core.conditions import condition_is, find_condition
from modelplane.core.vocabulary import (
    ACCEPTED,
    ANNOTATION_REVISION,
    API_VERSION,
    LABEL_MODEL_CACHE,
    MODEL_REPLICA,
    SERVING,
)
from modelplane.scheduling import UNIFIED_ROLE, Decision, DesiredReplica
from modelplane.xfn.memo import BoundedMemo
from modelplane.xfn.required import Required, read_each


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
    if accepted is None or accepted.get("status") != "False":
        return None
    return f"{accepted.get('reason', '')}: {accepted.get('message', '')}"


def serving(observed: dict[str, Any] | None) -> bool:
    """Whether an observed ModelReplica reports its model serving."""
    return condition_is(observed, SERVING, "True")


def status_problem(observed: dict[str, Any] | None) -> str | None:
    """Why an observed ModelReplica's status is no Kubernetes status, or None.

    No status, or no conditions, is readable: nothing is reported yet. A status
    that is not an object, conditions that are not a list of conditions each with
    a string type and status, cannot say whether the replica serves.
    """
    status = (observed or {}).get("status")
    if status is None:
        return None
    if not isinstance(status, dict):
        return "status is not an object"
    conditions = cast(dict[str, Any], status).get("conditions")
    if conditions is None:
        return None
    if not isinstance(conditions, list):
        return "status.conditions is not a list of conditions"
    for index, entry in enumerate(cast(list[Any], conditions)):
        where = f"status.conditions[{index}]"
        if not isinstance(entry, dict):
            return f"{where} is not a condition"
        fields = cast(dict[str, Any], entry)
        for key in ("type", "status"):
            if not isinstance(fields.get(key), str):
                return f"{where}.{key} is not a string"
    return None


def serves(observed: dict[str, dict[str, Any]], name: str) -> bool:
    """Whether the composed ModelReplica `name` serves, as far as can be known.

    A status that cannot be read says nothing new, so what was composed from the
    last one stands (the hold rule for bad input): the replica serves while the
    ModelEndpoint composed only for a serving replica is still there. Reading it as
    not serving would drop that endpoint, and the route to a replica that may serve.
    """
    obj = observed.get(name)
    if status_problem(obj) is not None:
        return endpoint_key(name) in observed
    return serving(obj)


def unreadable_statuses(
    observed: dict[str, dict[str, Any]], serving_now: dict[str, bool]
) -> list[str]:
    """A Warning's message for each placed replica whose status cannot be read."""
    messages: list[str] = []
    for name, serves_now in sorted(serving_now.items()):
        problem = status_problem(observed.get(name))
        if problem is not None:
            held = "its ModelEndpoint is held" if serves_now else "it is read as not serving"
            messages.append(f"ModelReplica {name}: {problem}; {held} until it can be read")
    return messages


def _text(fields: Any, key: str) -> str:
    value = fields.get(key)
    return value.string_value if value is not None else ""


def _serving_key(obj: Struct) -> tuple[str, str] | None:
    """(namespace, name) of a ModelReplica whose `Serving` condition is True, else None."""
    status = obj.fields.get("status")
    conditions = status.struct_value.fields.get("conditions") if status is not None else None
    if conditions is None:
        return None
    for entry in conditions.list_value.values:
        fields = entry.struct_value.fields
        if _text(fields, "type") == SERVING and _text(fields, "status") == "True":
            metadata = obj.fields.get("metadata")
            if metadata is None:
                return None
            meta = metadata.struct_value.fields
            return (_text(meta, "namespace"), _text(meta, "name"))
    return None


# Each read replica's serving key (or None), by its digest.
_SERVING: BoundedMemo[bytes, tuple[tuple[str, str] | None]] = BoundedMemo()


def serving_replicas(
    req: RunFunctionRequest, name: str, replicas: Required[Any]
) -> set[tuple[str, str]]:
    """(namespace, name) of each ModelReplica of `replicas` (the fetched list `name`)
    whose `Serving` condition is True, read straight from the fetched objects (the
    generated model has no conditions), once per object's bytes."""
    return {key for key in read_each(req, name, replicas, _serving_key, _SERVING) if key}


def placements(decision: Decision, serving_now: dict[str, bool]) -> list[dict[str, Any]]:
    return [
        {
            "replica": replica.name,
            "cluster": replica.cluster,
            "index": replica.index,
            "pools": {role.role: role.pool for role in replica.roles},
            "serving": serving_now[replica.name],
        }
        for replica in decision.replicas
    ]
