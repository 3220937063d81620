"""What compose-model-deployment asks Crossplane for, and what Crossplane fetches for
it, as the tests build them: the wide requirements, the narrow ones of a settled
deployment, and the answers to each."""

from typing import Any


def requirements(*clusters: str) -> dict[str, Any]:
    """What `deployment(...)` asks for once the clusters its matchLabels list (named
    `clusters`) are fetched: those clusters, the replicas on each, the classes."""
    resources: dict[str, Any] = {
        "inferenceclusters": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceCluster",
            "matchLabels": {"labels": {"tier": "production"}},
        },
        "priorityclasses": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"},
    }
    for name in clusters:
        resources[f"modelreplicas/{name}"] = {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelReplica",
            "matchLabels": {"labels": {"modelplane.ai/cluster": name}},
        }
    return {"resources": resources}


REQUIREMENTS = requirements("a", "b")


def narrow_requirements(*clusters: str) -> dict[str, Any]:
    """What a settled `deployment(...)` asks for: the clusters its replicas run on, by
    name, the replicas on each, the classes (compose_model_deployment.settled)."""
    resources: dict[str, Any] = {
        "priorityclasses": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"},
    }
    for name in clusters:
        resources[f"inferenceclusters/{name}"] = {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceCluster",
            "matchName": name,
        }
        resources[f"modelreplicas/{name}"] = {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelReplica",
            "matchLabels": {"labels": {"modelplane.ai/cluster": name}},
        }
    return {"resources": resources}


def narrow_fetched(
    clusters: list[dict[str, Any]], replicas: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """What Crossplane fetches for `narrow_requirements` of these clusters' names (no
    PriorityClass exists)."""
    answer: dict[str, list[dict[str, Any]]] = {"priorityclasses": []}
    for obj in clusters:
        name = obj["metadata"]["name"]
        answer[f"inferenceclusters/{name}"] = [obj]
        answer[f"modelreplicas/{name}"] = [
            r for r in replicas if r["metadata"]["labels"].get("modelplane.ai/cluster") == name
        ]
    return answer


def widened(
    clusters: list[dict[str, Any]], replicas: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """What the last call of a loop that began narrow and widened carries: its own
    clusters' answers (`narrow_fetched`, of every one of `clusters`) and the fleet's."""
    return {**narrow_fetched(clusters, replicas), **fetched(clusters, replicas)}


def widened_requirements(own: list[str], clusters: list[str]) -> dict[str, Any]:
    """What such a call asks for: its own clusters' and the fleet's requirements."""
    return {
        "resources": {
            **narrow_requirements(*own)["resources"],
            **requirements(*clusters)["resources"],
        }
    }


def fetched(
    clusters: list[dict[str, Any]], replicas: list[dict[str, Any]] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """What Crossplane fetches for those requirements when the clusters the matchLabels
    list are `clusters` (every test cluster carries tier: production): each cluster's
    list holds the replicas labelled with its name. Without `replicas`, the answer
    to the call before the per-cluster lists were asked for. No PriorityClass exists."""
    answer: dict[str, list[dict[str, Any]]] = {"inferenceclusters": clusters, "priorityclasses": []}
    if replicas is None:
        return answer
    for obj in clusters:
        metadata = obj.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        if isinstance(name, str):
            answer[f"modelreplicas/{name}"] = [
                r for r in replicas if r["metadata"]["labels"].get("modelplane.ai/cluster") == name
            ]
    return answer
