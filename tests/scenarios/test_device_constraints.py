"""DRA constraints: devices of several requests on one PCIe root.

One node whose class lists its GPUs and NICs per PCIe root, as separate entries
of one driver: four GPUs and a NIC on root 0, four GPUs and a NIC on root 1.
A replica asking for 4 GPUs and 1 NIC on one root places (twice: one per root,
counted per device entry), and its ResourceClaimTemplate carries the
constraint; one asking for 5 GPUs on one root cannot, nor can one constraining
an attribute no device has, and the match trace says why. A constraint naming
no request of the deployment is refused with a condition naming the field.
"""

from typing import Any

import pytest

from modelplane_cli import yamlio
from modelplane_cli.render import Document
from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, Renderer
from .manifests import IMAGE
from .test_examples import assert_valid

Obj = dict[str, Any]

PCIE = "resource.kubernetes.io/pcieRoot"

FLEET = """---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceClass
metadata: {name: h100-by-root}
spec:
  devices:
    - {name: gpu-root0, driver: gpu.nvidia.com, deviceClassName: gpu.nvidia.com, count: 4,
       attributes: {"resource.kubernetes.io/pcieRoot": {string: pci0000:00}}}
    - {name: gpu-root1, driver: gpu.nvidia.com, deviceClassName: gpu.nvidia.com, count: 4,
       attributes: {"resource.kubernetes.io/pcieRoot": {string: pci0000:80}}}
    - {name: nic-root0, driver: rdma.example.com, deviceClassName: rdma.example.com, count: 1,
       attributes: {"resource.kubernetes.io/pcieRoot": {string: pci0000:00}}}
    - {name: nic-root1, driver: rdma.example.com, deviceClassName: rdma.example.com, count: 1,
       attributes: {"resource.kubernetes.io/pcieRoot": {string: pci0000:80}}}
---
apiVersion: v1
kind: Secret
metadata: {name: a-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: a}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: a-kubeconfig, namespace: modelplane-system}}
  nodePools:
    - {name: pool, className: h100-by-root, nodeCount: 1}
"""

MODEL = """---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: %(name)s, namespace: team-a}
spec:
  replicas: %(replicas)d
  nodeSelector:
    devices:
      - {name: gpu, count: %(gpus)d, selectors: [{cel: 'device.driver == "gpu.nvidia.com"'}]}
      - {name: nic, count: 1, selectors: [{cel: 'device.driver == "rdma.example.com"'}]}
    constraints:
      - {requests: [%(requests)s], matchAttribute: "%(attribute)s"}
  workers:
    count: 1
    topology: {tensor: %(gpus)d}
    template:
      spec:
        containers:
          - {name: engine, image: "%(image)s"}
"""


def model(
    name: str, gpus: int, *, replicas: int = 1, requests: str = "gpu, nic", attribute: str = PCIE
) -> str:
    return MODEL % {
        "name": name,
        "replicas": replicas,
        "gpus": gpus,
        "requests": requests,
        "attribute": attribute,
        "image": IMAGE,
    }


@pytest.fixture(scope="module")
def fleet(renderer: Renderer) -> Fleet:
    text = FLEET + model("aligned", 4, replicas=2) + model("wide", 5)
    text += model("unknown", 4, attribute="gpu.nvidia.com/nvlinkDomain")
    text += model("typo", 4, requests="gpu, nics")
    docs = [Document("scenario", o) for o in yamlio.load_all(text) if o is not None]
    return renderer.documents(docs)


def _pool_trace(fleet: Fleet, name: str) -> list[Obj]:
    trace = fleet.one("ModelDeployment", name)["status"].get("matchTrace", [])
    return [entry for entry in trace if "pool" in entry]


def test_two_aligned_replicas_share_the_node_one_root_each(fleet: Fleet) -> None:
    assert [cluster for _, cluster, _ in fleet.placements("aligned")] == ["a", "a"]
    templates = [
        o["spec"]["forProvider"]["manifest"]
        for o in fleet.all("Object")
        if o["spec"]["forProvider"]["manifest"]["kind"] == "ResourceClaimTemplate"
    ]
    assert len(templates) == 2
    for template in templates:
        devices = template["spec"]["spec"]["devices"]
        assert devices["constraints"] == [{"requests": ["gpu", "nic"], "matchAttribute": PCIE}]
        assert [r["name"] for r in devices["requests"]] == ["gpu", "nic"]


def test_five_gpus_on_one_root_do_not_place(fleet: Fleet) -> None:
    assert fleet.placements("wide") == []
    (entry,) = _pool_trace(fleet, "wide")
    assert entry["reason"] == "TooFewDevices"
    assert "gpu-root0 has only 4 per node" in entry["message"]


def test_an_attribute_no_device_has_is_explained(fleet: Fleet) -> None:
    assert fleet.placements("unknown") == []
    (entry,) = _pool_trace(fleet, "unknown")
    assert entry["reason"] == "DevicesNotAligned"
    assert "no device of the pool has attribute gpu.nvidia.com/nvlinkDomain" in entry["message"]


def test_a_constraint_naming_no_request_is_refused(fleet: Fleet) -> None:
    condition = fleet.condition("ModelDeployment", "typo", "ReplicasScheduled")
    assert condition["status"] == "False"
    assert "spec.nodeSelector.constraints[0].requests[1]" in condition["message"]


def test_every_object_is_valid(fleet: Fleet, manifest_validator: ManifestValidator) -> None:
    assert_valid(fleet, manifest_validator)
