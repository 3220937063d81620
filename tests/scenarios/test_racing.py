"""Racing for the last node under `render --concurrent`: every composite of a round sees
the same snapshot, so three deployments take four of three nodes; the round after, the
replica that comes last by precedence and is not serving yet yields, and the fleet
converges with no device overcommitted."""

from pathlib import Path

from .cli import Fleet, modelplane

RACE = """
apiVersion: v1
kind: Secret
metadata: {name: solo-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: solo}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: solo-kubeconfig, namespace: modelplane-system}}
  nodePools:
    - {name: h100, className: h100-8x, nodeCount: 3}
"""
MODEL = """
---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: %s, namespace: %s}
spec:
  replicas: %d
  nodeSelector:
    devices:
      - name: gpu
        count: 8
        selectors:
          - cel: device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) >= 0
  workers:
    count: 1
    topology: {tensor: 8}
    template:
      spec:
        containers:
          - {name: engine, image: "vllm/vllm-openai:v0.7.3"}
"""


def test_racing_for_the_last_node_converges_without_overcommit(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "race", "catalog")
    models = [("incumbent", "team-0", 2), ("alpha", "team-a", 1), ("beta", "team-b", 1)]
    repo.path("race.yaml").write_text(RACE + "".join(MODEL % m for m in models))

    run = modelplane("render", repo.root, "--concurrent", "-o", "yaml")

    placed = {
        o["metadata"]["name"]: len(o["status"].get("placements") or [])
        for o in run.objects
        if o["kind"] == "ModelDeployment"
    }
    assert placed == {"alpha": 1, "beta": 0, "incumbent": 2}
    assert not any("overcommitted" in e for e in run.errors())
    removals = [
        o["message"]
        for o in run.objects
        if o["kind"] == "Event" and o["reason"] == "ReplicaRemoved"
    ]
    (removed,) = removals
    assert "Removed replica beta-" in removed
    assert "yielded pool h100 to a replica in another namespace" in removed
