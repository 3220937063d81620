"""One gang per disaggregated replica, through the whole chain.

The Volcano example fleet (examples/schedulers), with Modelplane composing the
gangs (`lwsGangScheduling: false`) and room for every model: each replica of the
disaggregated model (`split`) is one PodGroup with a task per role, valid against
Volcano's CRD, and every pod of the replica joins it; the unified multi-node model
(`big`) keeps a PodGroup per LeaderWorkerSet. Placement is what it is without the
setting.

The KAI example fleet with `podGrouper: Modelplane` composes no PodGroup at all:
KAI's podgrouper regroups every owned pod naming KAI's scheduler, so a composed one
would stay empty. Each cluster names the setting as ignored, and each `split`
replica warns that it is not one gang.
"""

from typing import Any

import pytest

from modelplane.core.kinds import pod_sites
from modelplane_cli.render import read_documents
from modelplane_cli.schema import ManifestValidator

from .fleets import EXAMPLES, Fleet, Renderer
from .test_examples import assert_valid

Obj = dict[str, Any]

SETTINGS = {
    "kai": ("kai", {"podGrouper": "Modelplane"}),
    "volcano": ("volcano", {"lwsGangScheduling": False}),
}


def _world(scheduler: str, modelplane_gangs: bool) -> list[Any]:
    docs = read_documents(
        [
            str(EXAMPLES / "catalog"),
            str(EXAMPLES / "schedulers" / "models.yaml"),
            str(EXAMPLES / "schedulers" / scheduler),
        ]
    )
    field, value = SETTINGS[scheduler]
    for doc in docs:
        obj = doc.obj
        if obj["kind"] != "InferenceCluster":
            continue
        if modelplane_gangs:
            obj["spec"]["scheduling"].setdefault(field, {}).update(value)
        for pool in obj["spec"]["nodePools"]:
            pool["nodeCount"] = 8
    return docs


@pytest.fixture(scope="module", params=sorted(SETTINGS))
def worlds(request: pytest.FixtureRequest, renderer: Renderer) -> tuple[str, Fleet, Fleet]:
    scheduler = str(request.param)
    return (
        scheduler,
        renderer.documents(_world(scheduler, True)),
        renderer.documents(_world(scheduler, False)),
    )


@pytest.fixture(scope="module")
def volcano(worlds: tuple[str, Fleet, Fleet]) -> Fleet:
    scheduler, fleet, _ = worlds
    if scheduler != "volcano":
        pytest.skip("only Volcano composes a replica gang")
    return fleet


@pytest.fixture(scope="module")
def kai(worlds: tuple[str, Fleet, Fleet]) -> Fleet:
    scheduler, fleet, _ = worlds
    if scheduler != "kai":
        pytest.skip("KAI only")
    return fleet


def _manifests(fleet: Fleet, replica: str) -> list[Obj]:
    return [
        o["spec"]["forProvider"]["manifest"]
        for o in fleet.all("Object", **{"modelplane.ai/replica": replica})
    ]


def test_each_pd_replica_is_one_podgroup_with_a_task_per_role(
    volcano: Fleet, manifest_validator: ManifestValidator
) -> None:
    replicas = [r for r, _, _ in volcano.placements("split")]
    assert len(replicas) == 2
    for replica in replicas:
        manifests = _manifests(volcano, replica)
        (group,) = [m for m in manifests if m["kind"] == "PodGroup"]
        assert manifest_validator.validate(group) == []
        pods: dict[str, int] = {}
        name = group["metadata"]["name"]
        for manifest in manifests:
            for pod_set_site in pod_sites(manifest):
                annotations = pod_set_site.metadata.get("annotations", {})
                assert annotations["scheduling.k8s.io/group-name"] == name
                role = annotations["volcano.sh/task-spec"]
                pods[role] = pods.get(role, 0) + 1
        assert set(pods) == {"decode", "prefill"}
        subgroups = group["spec"]["minTaskMember"]
        assert set(subgroups) == {"decode", "prefill"}
        assert all(n >= 1 for n in subgroups.values())
        assert group["spec"]["minMember"] == sum(subgroups.values())


def test_a_unified_multi_node_replica_keeps_a_gang_per_worker(volcano: Fleet) -> None:
    for replica, _, _ in volcano.placements("big"):
        for group in [m for m in _manifests(volcano, replica) if m["kind"] == "PodGroup"]:
            assert "minTaskMember" not in group["spec"]


def test_kai_composes_no_podgroup_and_says_the_pd_replica_is_not_one_gang(kai: Fleet) -> None:
    assert kai.manifests("PodGroup") == []
    for cluster in ("kai-native", "kai-kserve"):
        condition = kai.condition("InferenceCluster", cluster, "SchedulingConfigured")
        assert condition["status"] == "True"
        ignored = [
            e
            for e in kai.result.events
            if e["involvedObject"]["name"] == cluster and e["reason"] == "SchedulingFieldIgnored"
        ]
        assert len(ignored) == 1
        assert "spec.scheduling.kai.podGrouper: " in ignored[0]["message"]
    replicas = [r for r, _, _ in kai.placements("split")]
    assert len(replicas) == 2
    for replica in replicas:
        for manifest in _manifests(kai, replica):
            for site in pod_sites(manifest):
                annotations = site.metadata.get("annotations", {})
                assert "pod-group-name" not in annotations
                assert "kai.scheduler/skip-podgrouper" not in annotations
        limited = [
            e
            for e in kai.result.events
            if e["involvedObject"]["name"] == replica and e["reason"] == "GangLimited"
        ]
        assert limited and all("podgrouper" in e["message"] for e in limited)


def test_placement_is_unchanged_by_the_gang_form(worlds: tuple[str, Fleet, Fleet]) -> None:
    _, ganged, plain = worlds
    for deployment in ("chat", "big", "split"):
        assert ganged.placements(deployment) == plain.placements(deployment)


def test_every_object_is_valid(
    worlds: tuple[str, Fleet, Fleet], manifest_validator: ManifestValidator
) -> None:
    _, fleet, _ = worlds
    assert fleet.result.rejected_manifests == []
    assert_valid(fleet, manifest_validator)
