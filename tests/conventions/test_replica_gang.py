"""One gang per disaggregated replica: where the scheduler has sub-groups and
Modelplane composes its gang objects, prefill and decode of a replica are one
PodGroup with a minimum per role; elsewhere the replica says it is not."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions
from modelplane.core.kinds import pod_sites
from modelplane_cli.schema import ManifestValidator

from .support import handed, read_scheduling, typed

CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", None)
KAI = {
    "provider": "KAI",
    "queue": "q",
    "kai": {"podGrouper": "Modelplane", "queuesWithQuota": ["q"]},
}
VOLCANO = {"provider": "Volcano", "queue": "q", "volcano": {"lwsGangScheduling": False}}


def _apply(spec: dict[str, Any], manifests: list[dict[str, Any]]) -> Any:
    config, issues = read_scheduling(spec)
    assert issues == []
    return apply_conventions(typed(manifests), config, CONTEXT)


def _pd(build: Any) -> list[dict[str, Any]]:
    """Decode: 2 LWS groups of 2 pods; prefill: 3 single-pod workers."""
    return [
        build.lws("kimi-0-decode", "decode", size=2, replicas=2),
        build.deployment("kimi-0-prefill", "prefill", replicas=3),
    ]


def _pod_metadata(result: Any) -> dict[str, list[dict[str, Any]]]:
    """Every pod site's metadata, by the role of its workload."""
    out: dict[str, list[dict[str, Any]]] = {}
    for manifest in handed(result):
        role = manifest["metadata"]["labels"]["modelplane.ai/role"]
        out.setdefault(role, []).extend(site.metadata for site in pod_sites(manifest))
    return out


def test_kai_gangs_a_pd_replica_as_one_podgroup_with_a_subgroup_per_role(
    build: Any, manifest_validator: ManifestValidator
) -> None:
    result = _apply(KAI, _pd(build))
    assert result.issues == []
    (group,) = result.gangs
    assert manifest_validator.validate(group) == []
    assert group["apiVersion"] == "scheduling.run.ai/v2alpha2"
    assert group["spec"]["minMember"] == 7
    assert group["spec"]["subGroups"] == [
        {"name": "decode", "minMember": 4},
        {"name": "prefill", "minMember": 3},
    ]
    assert group["spec"]["queue"] == "q"
    assert "modelplane.ai/role" not in group["metadata"]["labels"]
    name = group["metadata"]["name"]
    for role, sites in _pod_metadata(result).items():
        assert sites
        for meta in sites:
            assert meta["annotations"]["pod-group-name"] == name
            assert meta["annotations"]["kai.scheduler/skip-podgrouper"] == "true"
            assert meta["labels"]["kai.scheduler/subgroup-name"] == role
    for manifest in handed(result):
        assert manifest_validator.validate(manifest, pods=True) == []


def test_volcano_gangs_a_pd_replica_as_one_podgroup_with_a_task_per_role(
    build: Any, manifest_validator: ManifestValidator
) -> None:
    result = _apply(VOLCANO, _pd(build))
    assert result.issues == []
    (group,) = result.gangs
    assert manifest_validator.validate(group) == []
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"] == {
        "minMember": 7,
        "minTaskMember": {"decode": 4, "prefill": 3},
        "queue": "q",
    }
    name = group["metadata"]["name"]
    for role, sites in _pod_metadata(result).items():
        for meta in sites:
            assert meta["annotations"]["scheduling.k8s.io/group-name"] == name
            assert meta["annotations"]["volcano.sh/task-spec"] == role


def test_a_kserve_pd_replica_is_one_gang_too(build: Any) -> None:
    manifests, _ = build.shapes["llmisvc-disaggregated"]()
    result = _apply(KAI, manifests)
    (group,) = result.gangs
    assert [s["name"] for s in group["spec"]["subGroups"]] == ["decode", "prefill"]
    (svc,) = handed(result)
    assert svc["spec"]["labels"]["kai.scheduler/subgroup-name"] == "decode"
    assert svc["spec"]["prefill"]["labels"]["kai.scheduler/subgroup-name"] == "prefill"


def test_a_unified_replica_keeps_its_gang_per_worker(build: Any) -> None:
    result = _apply(KAI, [build.lws(size=4)])
    (group,) = result.gangs
    assert "subGroups" not in group["spec"]
    assert group["spec"]["minMember"] == 4


def test_a_leader_ready_role_cannot_join_a_replica_gang(build: Any) -> None:
    manifests = [
        build.lws("kimi-0-decode", "decode", size=2, startup="LeaderReady"),
        build.deployment("kimi-0-prefill", "prefill", replicas=1),
    ]
    result = _apply(KAI, manifests)
    assert result.gangs == []
    assert [i.reason for i in result.issues] == ["GangLimited", "GangLimited"]
    assert "not one all-or-nothing gang" in result.issues[0].message


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ({"provider": "KAI", "queue": "q", "kai": {"queuesWithQuota": ["q"]}}, "podGrouper"),
        ({"provider": "Volcano", "queue": "q"}, "lwsGangScheduling"),
        ({"provider": "Kueue"}, "Kueue admits each role"),
        ({"provider": "Coscheduling"}, "no sub-groups"),
        ({"provider": "Default"}, "gang.api is Workload"),
    ],
)
def test_where_it_cannot_the_replica_says_so(spec: dict[str, Any], why: str, build: Any) -> None:
    result = _apply(spec, _pd(build))
    split = [i for i in result.issues if "not one all-or-nothing gang" in i.message]
    (issue,) = split
    assert (issue.severity, issue.reason, issue.path) == (
        "Warning",
        "GangLimited",
        "spec.scheduling.gang",
    )
    assert why in issue.message
    assert all(not g["spec"].get("subGroups") for g in result.gangs)


def test_gang_disabled_says_nothing(build: Any) -> None:
    result = _apply({**KAI, "gang": {"enabled": False}}, _pd(build))
    assert (result.gangs, result.issues) == ([], [])
