"""A multi-node replica on an NVLink pool gets a ComputeDomain and its channel claim.

One cluster `rack` has six GB200-like nodes whose class declares NVLink domains of
three nodes. `pair` runs one worker over two nodes (pipeline 2): it is placed in one
domain, and its LeaderWorkerSet's leader and worker pods both claim the IMEX
channel of the ComputeDomain composed beside it. `quad` needs four nodes in one
domain; the pool has the devices but no domain that large, so it is not placed and
the match trace says NoNVLinkDomainRoom.

A second cluster `kserve-rack`, the same nodes on the KServe backend, runs
`disagg`: decode and prefill each one worker over two nodes (data parallel: KServe
v0.20 runs no multi-node pipeline-parallel service). Each role gets its
own ComputeDomain, and its LLMInferenceService claims each role's IMEX channel in
the head's pod spec (`template`) and the followers' (`worker`) alike.
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

TEXT = """---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceClass
metadata: {name: gb200}
spec:
  topology: {nvlinkDomainNodes: 3}
  devices:
    - name: gpu
      driver: gpu.nvidia.com
      deviceClassName: gpu.nvidia.com
      count: 4
      attributes:
        productName: {string: NVIDIA GB200}
---
apiVersion: v1
kind: Secret
metadata: {name: rack-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: rack, labels: {kind: rack}}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: rack-kubeconfig, namespace: modelplane-system}}
  nodePools:
    - {name: nvl, className: gb200, nodeCount: 6}
---
apiVersion: v1
kind: Secret
metadata: {name: kserve-rack-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: kserve-rack, labels: {kind: kserve-rack}}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: kserve-rack-kubeconfig, namespace: modelplane-system}}
  backend: {type: KServe}
  nodePools:
    - {name: nvl, className: gb200, nodeCount: 6}
"""

ROLE = """
    nodeSelector:
      devices:
        - {name: gpu, count: 4}
    workers:
      count: 1
      topology: {tensor: 4, data: 2, dataLocal: 1}
      template:
        spec:
          containers:
            - {name: engine, image: "%(image)s"}
"""

DISAGGREGATED = (
    """---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: disagg, namespace: team-a}
spec:
  replicas: 1
  model: {uri: "hf://org/model"}
  clusterSelector: {matchLabels: {kind: kserve-rack}}
  decode:"""
    + ROLE
    + "  prefill:"
    + ROLE
)

MODEL = """---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: %(name)s, namespace: team-a}
spec:
  replicas: 1
  clusterSelector: {matchLabels: {kind: rack}}
  nodeSelector:
    devices:
      - {name: gpu, count: 4}
  workers:
    count: 1
    topology: {tensor: 4, pipeline: %(pipeline)d}
    template:
      spec:
        containers:
          - {name: engine, image: "%(image)s"}
"""


@pytest.fixture(scope="module")
def fleet(renderer: Renderer) -> Fleet:
    text = TEXT
    text += MODEL % {"name": "pair", "pipeline": 2, "image": IMAGE}
    text += MODEL % {"name": "quad", "pipeline": 4, "image": IMAGE}
    text += DISAGGREGATED % {"image": IMAGE}
    docs = [Document("scenario", o) for o in yamlio.load_all(text) if o is not None]
    rendered = renderer.documents(docs)
    assert rendered.result.ok, rendered.result.errors
    return rendered


def test_the_pool_publishes_its_domain_size(fleet: Fleet) -> None:
    published = find(fleet.objects, "InferenceCluster", "rack")["status"]["gpuPools"][0]
    assert published["nvlinkDomainNodes"] == 3


def test_a_two_node_replica_gets_a_compute_domain(
    fleet: Fleet, manifest_validator: ManifestValidator
) -> None:
    assert fleet.placements("pair")[0][1] == "rack"
    [domain] = [d for d in fleet.manifests("ComputeDomain") if "pair" in d["metadata"]["name"]]
    assert domain["apiVersion"] == "resource.nvidia.com/v1beta1"
    assert domain["spec"]["numNodes"] == 2
    channel = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
    assert manifest_validator.validate(domain) == []
    [lws] = fleet.manifests("LeaderWorkerSet")
    assert lws["metadata"]["namespace"] == domain["metadata"]["namespace"]
    specs = [spec for site in pod_sites(lws) for _, spec in site.specs]
    assert len(specs) == 2  # the leader's and the worker's
    for spec in specs:
        assert {"name": "nvlink-channel", "resourceClaimTemplateName": channel} in spec[
            "resourceClaims"
        ]
        [engine] = spec["containers"]
        assert {"name": "nvlink-channel"} in engine["resources"]["claims"]


def test_a_kserve_replica_claims_each_roles_channel_in_head_and_workers(
    fleet: Fleet, manifest_validator: ManifestValidator
) -> None:
    assert [p[1] for p in fleet.placements("disagg")] == ["kserve-rack"]
    domains = {
        d["metadata"]["labels"]["modelplane.ai/role"]: d
        for d in fleet.manifests("ComputeDomain")
        if "disagg" in d["metadata"]["name"]
    }
    assert sorted(domains) == ["decode", "prefill"]
    [service] = fleet.manifests("LLMInferenceService")
    for role, workload in (("decode", service["spec"]), ("prefill", service["spec"]["prefill"])):
        domain = domains[role]
        assert manifest_validator.validate(domain) == []
        assert domain["spec"]["numNodes"] == 2
        assert domain["metadata"]["namespace"] == service["metadata"]["namespace"]
        channel = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
        for spec in (workload["template"], workload["worker"]):
            assert {"name": "nvlink-channel", "resourceClaimTemplateName": channel} in spec[
                "resourceClaims"
            ]
            [engine] = spec["containers"]
            assert {"name": "nvlink-channel"} in engine["resources"]["claims"]
    assert manifest_validator.validate(service) == []


def test_a_replica_larger_than_a_domain_is_not_placed(fleet: Fleet) -> None:
    assert fleet.placements("quad") == []
    trace = find(fleet.objects, "ModelDeployment", "quad")["status"]
    assert "NoNVLinkDomainRoom" in str(trace)


def test_every_object_is_valid(fleet: Fleet, manifest_validator: ManifestValidator) -> None:
    assert_valid(fleet, manifest_validator)
