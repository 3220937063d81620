"""The ModelReplica objects a scheduling decision composes, and the status it reports.

Pure functions of the decision, the deployment object and the observed replicas,
so the function body stays a short story: fetch, decide, emit, report.
"""

from typing import Any

from modelplane.core.conditions import condition_is, find_condition
from modelplane.core.vocabulary import (
    ACCEPTED,
    API_VERSION,
    LABEL_CLUSTER,
    LABEL_DEPLOYMENT,
    LABEL_REPLICA_INDEX,
    MODEL_REPLICA,
    SERVING,
)
from modelplane.scheduling import UNIFIED_ROLE, Decision, DesiredReplica


def role_template(deployment: dict[str, Any], role: str) -> dict[str, Any]:
    spec = deployment.get("spec", {})
    workers = (
        spec.get("workers", {}) if role == UNIFIED_ROLE else spec.get(role, {}).get("workers", {})
    )
    return workers.get("template", {})


def replica_object(deployment: dict[str, Any], replica: DesiredReplica) -> dict[str, Any]:
    """The ModelReplica for a retained or newly placed replica, from the current spec."""
    spec: dict[str, Any] = {
        "deploymentName": deployment["metadata"]["name"],
        "clusterName": replica.cluster,
        "index": replica.index,
    }
    priority = deployment.get("spec", {}).get("priority")
    if priority:
        spec["priority"] = priority
    for role in replica.roles:
        spec[role.role] = {**role.as_dict(), "template": role_template(deployment, role.role)}
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_REPLICA,
        "metadata": {
            "name": replica.name,
            "labels": {
                LABEL_DEPLOYMENT: deployment["metadata"]["name"],
                LABEL_CLUSTER: replica.cluster,
                LABEL_REPLICA_INDEX: str(replica.index),
            },
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
