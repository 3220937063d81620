"""The Kubernetes Workload API: a cluster whose scheduling says `gang.api: Workload`.

A Native cluster run by the default scheduler, rendered alone with the three
models of examples/schedulers/models.yaml, at three versions: `wl135` at
Kubernetes 1.35 and `wl136` at 1.36 gang each disaggregated replica (`split`: prefill and decode
Deployments) through one Workload whose single pod group needs every pod of
the replica, and every one of those pods references it; the LeaderWorkerSet
model (`big`) cannot carry the reference and is reported. `old` at 1.34 serves
no Workload API: its InferenceCluster says so on SchedulingConfigured with a
Warning event naming the field, and its replicas still run, ungated.
"""

from typing import Any

import pytest

from modelplane.core.kinds import pod_sites
from modelplane_cli import yamlio
from modelplane_cli.render import Document, read_documents
from modelplane_cli.schema import ManifestValidator

from .fleets import EXAMPLES, Fleet, Renderer

Obj = dict[str, Any]

CLUSTER = """---
apiVersion: v1
kind: Secret
metadata: {name: %(name)s-kubeconfig, namespace: modelplane-system}
stringData: {kubeconfig: "apiVersion: v1\\nkind: Config\\n"}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: %(name)s}
spec:
  cluster:
    source: Existing
    existing: {secretRef: {name: %(name)s-kubeconfig, namespace: modelplane-system}}
  kubernetesVersion: "%(version)s"
  backend: {type: Native}
  nodePools:
    - {name: h100, className: h100-8x, nodeCount: 8}
    - {name: h200, className: h200-8x, nodeCount: 2}
    - {name: l4, className: l4-1x, nodeCount: 4}
  scheduling:
    provider: Default
    gang: {api: Workload}
"""

VERSIONS = {"wl135": "1.35", "wl136": "1.36", "old": "1.34"}


@pytest.fixture(scope="module")
def fleets(renderer: Renderer) -> dict[str, Fleet]:
    """One world per cluster, so every model places on it."""
    models = read_documents(
        [str(EXAMPLES / "catalog"), str(EXAMPLES / "schedulers" / "models.yaml")]
    )
    out: dict[str, Fleet] = {}
    for name, version in VERSIONS.items():
        text = CLUSTER % {"name": name, "version": version}
        docs = [Document("scenario", o) for o in yamlio.load_all(text) if o is not None]
        out[name] = renderer.documents([*models, *docs])
    return out


def _manifests(fleet: Fleet, cluster: str) -> list[Obj]:
    return [
        o["spec"]["forProvider"]["manifest"]
        for o in fleet.all("Object", **{"modelplane.ai/cluster": cluster})
    ]


def _replicas(fleet: Fleet, deployment: str, cluster: str) -> list[str]:
    return [r for r, c, _ in fleet.placements(deployment) if c == cluster]


@pytest.mark.parametrize(("cluster", "version"), [("wl135", "v1alpha1"), ("wl136", "v1alpha2")])
def test_a_disaggregated_replica_is_one_workload_gang(
    fleets: dict[str, Fleet], cluster: str, version: str, manifest_validator: ManifestValidator
) -> None:
    fleet = fleets[cluster]
    # The simulated API server of the cluster admitted everything composed there.
    assert fleet.result.rejected_manifests == []
    validator = ManifestValidator(manifest_validator.registry, VERSIONS[cluster])
    manifests = _manifests(fleet, cluster)
    workloads = [m for m in manifests if m["kind"] == "Workload"]
    split = _replicas(fleet, "split", cluster)
    assert split, "the scenario needs a split replica on the cluster"
    # One Workload per disaggregated replica; chat (one role) and big (LWS) have none.
    assert len(workloads) == len(split)
    for workload in workloads:
        assert workload["apiVersion"] == f"scheduling.k8s.io/{version}"
        assert validator.validate(workload) == []
    deployments = [
        m
        for m in manifests
        if m["kind"] == "Deployment"
        and m["metadata"]["labels"].get("modelplane.ai/deployment") == "split"
    ]
    assert {d["metadata"]["labels"]["modelplane.ai/role"] for d in deployments} == {
        "prefill",
        "decode",
    }
    groups = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "PodGroup"}
    for replica in split:
        (workload,) = [
            w for w in workloads if w["metadata"]["labels"]["modelplane.ai/replica"] == replica
        ]
        mine = [
            d for d in deployments if d["metadata"]["labels"]["modelplane.ai/replica"] == replica
        ]
        pods = sum(d["spec"]["replicas"] for d in mine)
        name = workload["metadata"]["name"]
        if version == "v1alpha1":
            (group,) = workload["spec"]["podGroups"]
            assert group["policy"] == {"gang": {"minCount": pods}}
            wanted = {"workloadRef": {"name": name, "podGroup": group["name"]}}
        else:
            (template,) = workload["spec"]["podGroupTemplates"]
            assert template["schedulingPolicy"] == {"gang": {"minCount": pods}}
            (group,) = [
                g
                for g in groups.values()
                if g["spec"]["podGroupTemplateRef"]["workload"]["workloadName"] == name
            ]
            assert validator.validate(group) == []
            wanted = {"schedulingGroup": {"podGroupName": group["metadata"]["name"]}}
        for deployment in mine:
            assert validator.validate(deployment) == []
            for site in pod_sites(deployment):
                for _, spec in site.specs:
                    assert {k: spec.get(k) for k in wanted} == wanted


def test_a_lws_replica_is_reported_not_silently_ungated(fleets: dict[str, Fleet]) -> None:
    fleet = fleets["wl135"]
    big = _replicas(fleet, "big", "wl135")
    assert big
    for replica in big:
        events = [
            e
            for e in fleet.result.events
            if e["involvedObject"]["name"] == replica and e["reason"] == "GangLimited"
        ]
        assert events and all("workloadRef" in e["message"] for e in events)


def test_a_version_without_the_api_is_a_condition_and_a_warning_naming_the_field(
    fleets: dict[str, Fleet],
) -> None:
    fleet = fleets["old"]
    condition = fleet.condition("InferenceCluster", "old", "SchedulingConfigured")
    assert (condition["status"], condition["reason"]) == ("True", "GangAPIUnavailable")
    assert "spec.scheduling.gang.api" in condition["message"]
    assert "Kubernetes 1.34" in condition["message"]
    (event,) = [
        e
        for e in fleet.result.events
        if e["involvedObject"]["name"] == "old" and e["reason"] == "GangAPIUnavailable"
    ]
    assert event["type"] == "Warning"
    assert "spec.scheduling.gang.api" in event["message"]
    # Nothing that runs is removed: the replicas there are rendered, just not ganged.
    manifests = _manifests(fleet, "old")
    assert [m for m in manifests if m["kind"] == "Deployment"]
    assert not [m for m in manifests if m["kind"] in ("Workload", "PodGroup")]
