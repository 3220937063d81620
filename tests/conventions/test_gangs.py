"""Gang objects: when Modelplane composes them, their shape, and how pods join them."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions
from modelplane.core.kinds import pod_sites
from modelplane_cli.schema import ManifestValidator

from .support import handed, read_scheduling, typed

CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", "batch")


def _apply(spec: dict[str, Any], manifests: list[dict[str, Any]]) -> Any:
    config, issues = read_scheduling(spec)
    assert issues == []
    return apply_conventions(typed(manifests), config, CONTEXT)


def _worker_meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]


def test_coscheduling_lws_gang(build: Any, manifest_validator: ManifestValidator) -> None:
    result = _apply({"provider": "Coscheduling"}, [build.lws(size=4, replicas=1)])
    (group,) = result.gangs
    assert manifest_validator.validate(group) == []
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["spec"] == {"minMember": 4}
    (obj,) = handed(result)
    lwt = obj["spec"]["leaderWorkerTemplate"]
    for key in ("leaderTemplate", "workerTemplate"):
        assert (
            lwt[key]["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"]
            == group["metadata"]["name"]
        )
    assert result.issues == []


def test_gang_spanning_several_workers_is_reported(build: Any) -> None:
    result = _apply({"provider": "Coscheduling"}, [build.lws(size=2, replicas=3)])
    (group,) = result.gangs
    assert group["spec"]["minMember"] == 6
    (issue,) = result.issues
    assert issue.severity == "Warning"
    assert issue.reason == "GangLimited"
    assert "3 workers of 2 pods" in issue.message


def test_leader_ready_is_never_ganged_by_hand(build: Any) -> None:
    result = _apply({"provider": "Coscheduling"}, [build.lws(size=2, startup="LeaderReady")])
    assert result.gangs == []
    assert "scheduling.x-k8s.io/pod-group" not in _worker_meta(handed(result)[0])["labels"]
    assert [f.reason for f in result.issues] == ["GangLimited"]


@pytest.mark.parametrize(
    ("spec", "manifest"),
    [
        ({"provider": "Coscheduling", "gang": {"enabled": False}}, "lws"),
        ({"provider": "Coscheduling"}, "lws-size-1"),
        ({"provider": "Coscheduling"}, "lws-no-replicas"),
        ({"provider": "Coscheduling"}, "deployment"),
        ({"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}}, "lws"),
        ({"provider": "Kueue"}, "lws"),
        ({"provider": "Volcano"}, "lws"),
        ({"provider": "Default"}, "lws"),
    ],
)
def test_no_gang_object(spec: dict[str, Any], manifest: str, build: Any) -> None:
    """Nothing to compose, and nothing to say about gangs (Volcano's LWS provider
    does say that its PodGroups drop the priority: `test_volcano_lws_priority`)."""
    manifests = {
        "lws": [build.lws(size=4)],
        "lws-size-1": [build.lws(size=1, replicas=3)],
        "lws-no-replicas": [build.lws(size=4, replicas=0)],
        "deployment": [build.deployment(replicas=5)],
    }[manifest]
    result = _apply(spec, manifests)
    assert result.gangs == []
    assert [i for i in result.issues if i.reason != "PriorityNotExpressible"] == []


def test_volcano_without_lws_provider_composes_its_podgroup(
    build: Any, manifest_validator: ManifestValidator
) -> None:
    spec = {
        "provider": "Volcano",
        "queue": "{{ .Namespace }}",
        "volcano": {"lwsGangScheduling": False},
    }
    result = _apply(spec, [build.lws(size=3)])
    (group,) = result.gangs
    assert manifest_validator.validate(group) == []
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"] == {"minMember": 3, "queue": "ml-team", "priorityClassName": "batch"}
    annotations = _worker_meta(handed(result)[0])["annotations"]
    assert annotations["scheduling.k8s.io/group-name"] == group["metadata"]["name"]
    assert annotations["scheduling.volcano.sh/queue-name"] == "ml-team"


def test_volcano_own_podgroup_carries_the_kserve_queue(build: Any) -> None:
    svc = build.llmisvc(main=build.kserve_block(worker=True, parallelism=build.pipeline2))
    spec = {"provider": "Volcano", "queue": "gpu", "volcano": {"lwsGangScheduling": False}}
    result = _apply(spec, [svc])
    (group,) = result.gangs
    assert group["spec"]["queue"] == "gpu"
    assert (
        handed(result)[0]["spec"]["annotations"]["scheduling.k8s.io/group-name"]
        == (group["metadata"]["name"])
    )
    assert result.issues == []


@pytest.mark.parametrize("pod_grouper", ["Automatic", "Modelplane"])
@pytest.mark.parametrize("shape", ["lws", "deployment"])
def test_kai_leaves_every_pod_to_its_podgrouper(pod_grouper: str, shape: str, build: Any) -> None:
    """KAI's podgrouper regroups every owned pod naming KAI's scheduler and rewrites its
    pod-group-name: nothing Modelplane puts on a pod keeps it out, so a PodGroup
    Modelplane composed would stay empty. None is composed, whatever podGrouper says,
    and the Modelplane value is named as ignored."""
    config, issues = read_scheduling(
        {
            "provider": "KAI",
            "queue": "q",
            "defaultLabels": {"kai.scheduler/preemptibility": "preemptible"},
            "kai": {"podGrouper": pod_grouper, "queuesWithQuota": ["q"]},
        }
    )
    ignored = [(i.severity, i.reason, i.path) for i in issues]
    if pod_grouper == "Modelplane":
        assert ignored == [("Warning", "SchedulingFieldIgnored", "spec.scheduling.kai.podGrouper")]
        assert "pod-group-name" in issues[0].message
    else:
        assert ignored == []
    workload = build.lws(size=2) if shape == "lws" else build.deployment()
    result = apply_conventions(typed([workload]), config, CONTEXT)
    assert result.gangs == []
    assert result.issues == []
    for site in pod_sites(handed(result)[0]):
        assert not set(site.metadata.get("annotations", {})) & {
            "pod-group-name",
            "kai.scheduler/skip-podgrouper",
        }
        assert "kai.scheduler/subgroup-name" not in site.metadata.get("labels", {})


def test_gang_names_are_stable_and_distinct(build: Any) -> None:
    spec = {"provider": "Coscheduling"}
    manifests, _ = build.shapes["lws-disaggregated"]()
    first = _apply(spec, manifests)
    second = _apply(spec, manifests)
    assert first.gangs == second.gangs
    names = [o["metadata"]["name"] for o in first.gangs]
    assert len(set(names)) == 2
    long_name = build.lws(name="x" * 50, size=2)
    (group,) = _apply(spec, [long_name]).gangs
    assert len(group["metadata"]["name"]) <= 63
