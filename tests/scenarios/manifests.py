"""Small fleets the scenarios write as a user would: one H100 pool per cluster, and
models that each take a whole 8-GPU node, so a scenario counts capacity in nodes."""

IMAGE = "vllm/vllm-openai:v0.7.3"

_CLUSTER = """---
apiVersion: v1
kind: Secret
metadata: {name: %(name)s-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: %(name)s%(labels)s}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: %(name)s-kubeconfig, namespace: modelplane-system}}
  nodePools:
    - {name: h100, className: h100-8x, nodeCount: %(nodes)d}
%(extra)s"""

_MODEL = """---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: %(name)s, namespace: %(namespace)s}
spec:
  replicas: %(replicas)d
%(extra)s  nodeSelector:
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
          - {name: engine, image: "%(image)s"}
"""


def h100_cluster(
    name: str, nodes: int, *, labels: dict[str, str] | None = None, spec: str = ""
) -> str:
    """A kubeconfig Secret and an InferenceCluster with `nodes` 8x H100 nodes; `spec`
    adds indented lines to the cluster's spec."""
    pairs = ", ".join(f"{k}: {v}" for k, v in sorted((labels or {}).items()))
    written = f", labels: {{{pairs}}}" if pairs else ""
    return _CLUSTER % {"name": name, "labels": written, "nodes": nodes, "extra": spec}


def h100_model(name: str, namespace: str, *, replicas: int = 1, spec: str = "") -> str:
    """A ModelDeployment whose every replica takes one whole 8x H100 node; `spec` adds
    indented lines to its spec."""
    return _MODEL % {
        "name": name,
        "namespace": namespace,
        "replicas": replicas,
        "extra": spec,
        "image": IMAGE,
    }
