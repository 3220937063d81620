"""One gang per disaggregated replica: where the scheduler has sub-groups and
Modelplane composes its gang objects (Volcano), prefill and decode of a replica are
one PodGroup with a minimum per role; elsewhere (KAI too: its podgrouper owns every
KAI PodGroup) the replica says it is not."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions
from modelplane.core.kinds import pod_sites
from modelplane_cli.schema import ManifestValidator

from .support import handed, read_scheduling, typed

CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", None)
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


def test_kai_never_composes_the_replica_gang(build: Any) -> None:
    """`podGrouper: Modelplane` once composed a PodGroup with a sub-group per role and
    pointed the pods at it; KAI's podgrouper regroups such pods anyway, so that
    PodGroup stayed empty while the replica read as one gang. The setting is named as
    ignored and the replica says it is not one gang, as with Automatic."""
    config, parsed = read_scheduling(
        {"provider": "KAI", "queue": "q", "kai": {"podGrouper": "Modelplane"}}
    )
    assert [(i.reason, i.path) for i in parsed] == [
        ("SchedulingFieldIgnored", "spec.scheduling.kai.podGrouper")
    ]
    result = apply_conventions(typed(_pd(build)), config, CONTEXT)
    assert result.gangs == []
    (issue,) = [i for i in result.issues if "not one all-or-nothing gang" in i.message]
    assert (issue.severity, issue.reason) == ("Warning", "GangLimited")
    assert "podgrouper" in issue.message
    for sites in _pod_metadata(result).values():
        for meta in sites:
            assert "pod-group-name" not in meta.get("annotations", {})
            assert "kai.scheduler/subgroup-name" not in meta.get("labels", {})


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
    result = _apply(VOLCANO, manifests)
    (group,) = result.gangs
    assert set(group["spec"]["minTaskMember"]) == {"decode", "prefill"}
    (svc,) = handed(result)
    assert svc["spec"]["annotations"]["volcano.sh/task-spec"] == "decode"
    assert svc["spec"]["prefill"]["annotations"]["volcano.sh/task-spec"] == "prefill"


@pytest.mark.parametrize("shape", ["deployments", "llmisvc-single-node"], ids=["Native", "KServe"])
def test_with_the_lws_provider_a_replica_of_deployments_is_still_one_gang(
    shape: str, build: Any, manifest_validator: ManifestValidator
) -> None:
    """The LWS provider gangs LWS pods only; Volcano makes no PodGroup for a pod that
    names one. So a replica none of whose roles is an LWS is one PodGroup with a task
    per role, whether or not the provider is on."""
    manifests = {
        "deployments": lambda: [
            build.deployment("kimi-0-decode", "decode", replicas=1),
            build.deployment("kimi-0-prefill", "prefill", replicas=3),
        ],
        "llmisvc-single-node": lambda: [
            build.llmisvc(
                role="decode",
                main=build.kserve_block(worker=False),
                prefill=build.kserve_block(worker=False, replicas=3),
            )
        ],
    }[shape]()
    result = _apply({"provider": "Volcano", "queue": "q"}, manifests)
    assert result.issues == []
    (group,) = result.gangs
    assert manifest_validator.validate(group) == []
    assert group["spec"]["minTaskMember"] == {"decode": 1, "prefill": 3}
    assert group["spec"]["minMember"] == 4
    for obj in handed(result):
        for site in pod_sites(obj):
            annotations = site.metadata["annotations"]
            assert annotations["scheduling.k8s.io/group-name"] == group["metadata"]["name"]
            assert annotations["volcano.sh/task-spec"] in {"decode", "prefill"}


def test_a_unified_replica_keeps_its_gang_per_worker(build: Any) -> None:
    result = _apply(VOLCANO, [build.lws(size=4)])
    (group,) = result.gangs
    assert "minTaskMember" not in group["spec"]
    assert group["spec"]["minMember"] == 4


def test_a_leader_ready_role_cannot_join_a_replica_gang(build: Any) -> None:
    manifests = [
        build.lws("kimi-0-decode", "decode", size=2, startup="LeaderReady"),
        build.deployment("kimi-0-prefill", "prefill", replicas=1),
    ]
    result = _apply(VOLCANO, manifests)
    assert result.gangs == []
    assert [i.reason for i in result.issues] == ["GangLimited", "GangLimited"]
    assert "not one all-or-nothing gang" in result.issues[0].message


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ({"provider": "KAI", "queue": "q", "kai": {"queuesWithQuota": ["q"]}}, "podgrouper"),
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
    result = _apply({**VOLCANO, "gang": {"enabled": False}}, _pd(build))
    assert (result.gangs, result.issues) == ([], [])
