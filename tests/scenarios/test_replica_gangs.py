"""One gang per disaggregated replica, through the whole chain.

The KAI and Volcano example fleets (examples/schedulers), with Modelplane
composing the gangs (KAI `podGrouper: Modelplane`, Volcano
`lwsGangScheduling: false`) and room for every model: each replica of the
disaggregated model (`split`) is one PodGroup with a sub-group (KAI) or a task
(Volcano) per role, valid against the scheduler's CRD, and every pod of the
replica joins it; the unified multi-node model (`big`) keeps a PodGroup per
LeaderWorkerSet. Placement is what it is without the setting.
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
GROUP_KEY = {"kai": "pod-group-name", "volcano": "scheduling.k8s.io/group-name"}


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


def _manifests(fleet: Fleet, replica: str) -> list[Obj]:
    return [
        o["spec"]["forProvider"]["manifest"]
        for o in fleet.all("Object", **{"modelplane.ai/replica": replica})
    ]


def test_each_pd_replica_is_one_podgroup_per_role(
    worlds: tuple[str, Fleet, Fleet], manifest_validator: ManifestValidator
) -> None:
    scheduler, fleet, _ = worlds
    replicas = [r for r, _, _ in fleet.placements("split")]
    assert len(replicas) == 2
    for replica in replicas:
        manifests = _manifests(fleet, replica)
        (group,) = [m for m in manifests if m["kind"] == "PodGroup"]
        assert manifest_validator.validate(group) == []
        pods: dict[str, int] = {}
        name = group["metadata"]["name"]
        for manifest in manifests:
            for pod_set_site in pod_sites(manifest):
                labels = pod_set_site.metadata.get("labels", {})
                annotations = pod_set_site.metadata.get("annotations", {})
                assert annotations[GROUP_KEY[scheduler]] == name
                role = (
                    labels["kai.scheduler/subgroup-name"]
                    if scheduler == "kai"
                    else annotations["volcano.sh/task-spec"]
                )
                pods[role] = pods.get(role, 0) + 1
        assert set(pods) == {"decode", "prefill"}
        if scheduler == "kai":
            subgroups = {s["name"]: s["minMember"] for s in group["spec"]["subGroups"]}
        else:
            subgroups = group["spec"]["minTaskMember"]
        assert set(subgroups) == {"decode", "prefill"}
        assert all(n >= 1 for n in subgroups.values())
        assert group["spec"]["minMember"] == sum(subgroups.values())


def test_a_unified_multi_node_replica_keeps_a_gang_per_worker(
    worlds: tuple[str, Fleet, Fleet],
) -> None:
    _, fleet, _ = worlds
    for replica, _, _ in fleet.placements("big"):
        for group in [m for m in _manifests(fleet, replica) if m["kind"] == "PodGroup"]:
            assert "subGroups" not in group["spec"]
            assert "minTaskMember" not in group["spec"]


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
