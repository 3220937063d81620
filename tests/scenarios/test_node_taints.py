"""Replicas tolerate exactly the taints their class says its nodes carry.

Two clusters: `mig` has A100 nodes partitioned by MIG (DeviceClass
`mig.nvidia.com`) whose class declares two taints; `plain` has GPU nodes
(DeviceClass `gpu.nvidia.com`) whose class declares none. The MIG replica's pods
tolerate both taints, though nothing in "mig.nvidia.com" says GPU; the plain
replica's pods tolerate nothing, though its device class is named gpu.
"""

from typing import Any

import pytest

from modelplane.core.kinds import pod_sites
from modelplane_cli import yamlio
from modelplane_cli.render import Document
from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, Renderer, find
from .manifests import IMAGE
from .test_examples import assert_valid

Obj = dict[str, Any]

CLASSES = """---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceClass
metadata: {name: a100-mig}
spec:
  nodeTaints:
    - {key: nvidia.com/gpu, effect: NoSchedule}
    - {key: nvidia.com/mig.config, value: all-1g.10gb, effect: NoExecute}
  devices:
    - name: mig
      driver: gpu.nvidia.com
      deviceClassName: mig.nvidia.com
      count: 7
      attributes:
        profile: {string: 1g.10gb}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceClass
metadata: {name: plain-gpu}
spec:
  devices:
    - name: gpu
      driver: gpu.nvidia.com
      deviceClassName: gpu.nvidia.com
      count: 1
      attributes:
        productName: {string: NVIDIA L4}
"""

CLUSTER = """---
apiVersion: v1
kind: Secret
metadata: {name: %(name)s-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: %(name)s, labels: {kind: %(name)s}}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: %(name)s-kubeconfig, namespace: modelplane-system}}
  nodePools:
    - {name: pool, className: %(klass)s, nodeCount: 1}
"""

MODEL = """---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: %(name)s, namespace: team-a}
spec:
  replicas: 1
  clusterSelector: {matchLabels: {kind: %(name)s}}
  nodeSelector:
    devices:
      - {name: %(device)s, count: 1}
  workers:
    count: 1
    topology: {tensor: 1}
    template:
      spec:
        containers:
          - {name: engine, image: "%(image)s"}
"""


@pytest.fixture(scope="module")
def fleet(renderer: Renderer) -> Fleet:
    text = CLASSES
    text += CLUSTER % {"name": "mig", "klass": "a100-mig"}
    text += CLUSTER % {"name": "plain", "klass": "plain-gpu"}
    text += MODEL % {"name": "mig", "device": "mig", "image": IMAGE}
    text += MODEL % {"name": "plain", "device": "gpu", "image": IMAGE}
    docs = [Document("scenario", o) for o in yamlio.load_all(text) if o is not None]
    rendered = renderer.documents(docs)
    assert rendered.result.ok, rendered.result.errors
    return rendered


def _pod_tolerations(fleet: Fleet, cluster: str) -> list[Any]:
    """The tolerations of every pod template Modelplane wrote for `cluster`."""
    found: list[Any] = []
    for obj in fleet.objects:
        if obj["kind"] != "Object" or obj["spec"]["providerConfigRef"]["name"] != cluster:
            continue
        manifest = obj["spec"]["forProvider"]["manifest"]
        for site in pod_sites(manifest):
            found.extend(spec.get("tolerations") for _, spec in site.specs)
    assert found, f"no pods rendered on {cluster}"
    return found


def test_a_mig_replica_tolerates_its_nodes_taints(fleet: Fleet) -> None:
    assert fleet.placements("mig")[0][1] == "mig"
    expected = [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {
            "key": "nvidia.com/mig.config",
            "operator": "Equal",
            "value": "all-1g.10gb",
            "effect": "NoExecute",
        },
    ]
    assert all(t == expected for t in _pod_tolerations(fleet, "mig"))
    published = find(fleet.objects, "InferenceCluster", "mig")["status"]["gpuPools"][0]
    assert published["nodeTaints"] == [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
        {"key": "nvidia.com/mig.config", "value": "all-1g.10gb", "effect": "NoExecute"},
    ]


def test_a_class_without_taints_gives_no_toleration(fleet: Fleet) -> None:
    assert fleet.placements("plain")[0][1] == "plain"
    assert _pod_tolerations(fleet, "plain") == [None]
    published = find(fleet.objects, "InferenceCluster", "plain")["status"]["gpuPools"][0]
    assert "nodeTaints" not in published


def test_every_object_is_valid(fleet: Fleet, manifest_validator: ManifestValidator) -> None:
    assert_valid(fleet, manifest_validator)
