"""Every provider x workload kind x unified/disaggregated shape, checked end to end."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions
from modelplane.core.kinds import pod_sites
from modelplane_cli.schema import ManifestValidator

from .support import handed, read_scheduling, typed

PROVIDERS = ["Default", "KAI", "Kueue", "Volcano", "Coscheduling"]
SHAPES = [
    "deployment-unified",
    "deployment-disaggregated",
    "lws-unified",
    "lws-disaggregated",
    "lws-disaggregated-mixed",
    "llmisvc-unified-single",
    "llmisvc-unified-multi",
    "llmisvc-disaggregated",
    "llmisvc-disaggregated-mixed",
]
QUEUED = {"KAI", "Kueue", "Volcano"}
CONTEXT = TemplateContext(
    namespace="ml-team", name="kimi", replica="kimi-0", cluster="prod-east", priority=None
)
QUEUE = "ml-team-q"
PRIORITY = "production-standard"
SCHEDULERS = {
    "Default": None,
    "KAI": "kai-scheduler",
    "Kueue": None,
    "Volcano": "volcano",
    "Coscheduling": "scheduler-plugins-scheduler",
}
DEFAULT_LABELS = {"example.com/team": "ml-team", "example.com/replica": "kimi-0"}
DEFAULT_ANNOTATIONS = {"example.com/cluster": "prod-east"}


def _spec(provider: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "provider": provider,
        "defaultPriority": PRIORITY,
        "defaultLabels": {
            "example.com/team": "{{ .Namespace }}",
            "example.com/replica": "{{ .Replica }}",
        },
        "defaultAnnotations": {"example.com/cluster": "{{ .Cluster }}"},
    }
    if provider in QUEUED:
        spec["queue"] = "{{ .Namespace }}-q"
    if provider == "Kueue":
        spec["kueue"] = {"workloadPriorityClasses": [PRIORITY]}
    if provider == "KAI":
        spec["kai"] = {"queuesWithQuota": [QUEUE]}
    return spec


def _expected_object_keys(provider: str, kind: str) -> tuple[dict[str, str], dict[str, str]]:
    labels, annotations = dict(DEFAULT_LABELS), dict(DEFAULT_ANNOTATIONS)
    if provider == "KAI":
        labels["kai.scheduler/queue"] = QUEUE
    if provider == "Kueue":
        labels["kueue.x-k8s.io/queue-name"] = QUEUE
        labels["kueue.x-k8s.io/priority-class"] = PRIORITY
    if provider == "Volcano" and kind == "LeaderWorkerSet":
        annotations["scheduling.volcano.sh/queue-name"] = QUEUE
    return labels, annotations


def _expected_pod_keys(provider: str) -> tuple[dict[str, str], dict[str, str]]:
    labels, annotations = dict(DEFAULT_LABELS), dict(DEFAULT_ANNOTATIONS)
    if provider == "KAI":
        labels["kai.scheduler/queue"] = QUEUE
    if provider == "Volcano":
        annotations["scheduling.volcano.sh/queue-name"] = QUEUE
    return labels, annotations


def test_shape_table_is_complete(build: Any) -> None:
    assert set(SHAPES) == set(build.shapes)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_conventions_land_where_the_scheduler_reads_them(
    provider: str, shape: str, build: Any, manifest_validator: ManifestValidator
) -> None:
    manifests, gangs = build.shapes[shape]()
    config, parse_issues = read_scheduling(_spec(provider))
    assert parse_issues == []
    result = apply_conventions(typed(manifests), config, CONTEXT)

    assert result.ok, result.issues
    assert len(handed(result)) == len(manifests)
    # Volcano's LWS provider gangs only LWS pods: a disaggregated replica of
    # Deployments alone is one PodGroup Modelplane composes, with a task per role.
    replica_gang = provider == "Volcano" and shape == "deployment-disaggregated"
    for obj in handed(result):
        assert manifest_validator.validate(obj, pods=True) == []
        want_labels, want_annotations = _expected_object_keys(provider, obj["kind"])
        meta = obj["metadata"]
        assert {k: meta["labels"][k] for k in want_labels} == want_labels
        for key in meta["labels"]:
            assert key in want_labels or key.startswith("modelplane.ai/")
        assert meta.get("annotations", {}) == want_annotations

        pod_labels, pod_annotations = _expected_pod_keys(provider)
        for site in pod_sites(obj):
            where = site.path
            labels = site.metadata["labels"]
            annotations = site.metadata.get("annotations", {})
            assert {k: labels[k] for k in pod_labels} == pod_labels, where
            gang_label = labels.pop("scheduling.x-k8s.io/pod-group", None)
            assert (gang_label is not None) == (provider == "Coscheduling" and _is_gang(obj, where))
            assert set(labels) - set(pod_labels) <= {"app"}, where
            if replica_gang:
                role = obj["metadata"]["labels"]["modelplane.ai/role"]
                assert annotations.pop("volcano.sh/task-spec") == role, where
                assert annotations.pop("scheduling.k8s.io/group-name"), where
            assert annotations == pod_annotations, where
            assert not any(k.startswith("kueue.x-k8s.io/") for k in labels), where
            for _, pod_spec in site.specs:
                assert pod_spec.get("schedulerName") == SCHEDULERS[provider], where
                assert pod_spec["priorityClassName"] == PRIORITY, where

    expected_gangs = sorted(gangs) if provider == "Coscheduling" else []
    if replica_gang:
        expected_gangs = [sum(obj["spec"]["replicas"] for obj in manifests)]
    assert sorted(o["spec"]["minMember"] for o in result.gangs) == expected_gangs
    for gang in result.gangs:
        assert manifest_validator.validate(gang) == []
        assert gang["metadata"]["namespace"] == build.namespace
        assert len(gang["metadata"]["name"]) <= 63

    # What Volcano's LWS provider cannot express, per LWS: the queue, which it reads
    # from the LWS object and KServe creates without it; and the priority, which its
    # PodGroups never carry.
    expected: list[str] = []
    if provider == "Volcano":
        queue = ["QueueNotExpressible"] if shape.startswith("llmisvc") else []
        expected = [*queue, "PriorityNotExpressible"] * len(gangs)
    # No other provider here forms one gang of a disaggregated replica (KAI's
    # podgrouper groups every KAI pod, Volcano's LWS provider creates its gangs for
    # LWS pods), and each says so once.
    if "disaggregated" in shape and not replica_gang:
        expected = ["GangLimited", *expected]
    assert [f.reason for f in result.issues] == expected, result.issues


def _is_gang(obj: dict[str, Any], where: str) -> bool:
    """Whether the pods at `where` belong to a multi-pod LWS worker."""
    if obj["kind"] == "Deployment":
        return False
    if obj["kind"] == "LeaderWorkerSet":
        return obj["spec"]["leaderWorkerTemplate"]["size"] > 1
    block = obj["spec"] if where == "spec" else obj["spec"]["prefill"]
    return "worker" in block


@pytest.mark.parametrize("provider", PROVIDERS)
def test_disaggregated_roles_get_identical_conventions(provider: str, build: Any) -> None:
    manifests, _ = build.shapes["lws-disaggregated"]()
    config, _ = read_scheduling(_spec(provider))
    decode, prefill = handed(apply_conventions(typed(manifests), config, CONTEXT))

    def scheduling_view(obj: dict[str, Any]) -> list[Any]:
        view: list[Any] = []
        for site in pod_sites(obj):
            labels = {
                k: v
                for k, v in site.metadata["labels"].items()
                if k != "scheduling.x-k8s.io/pod-group"
            }
            view.append((labels, site.metadata.get("annotations")))
            view.extend((s.get("schedulerName"), s.get("priorityClassName")) for _, s in site.specs)
        return view

    assert scheduling_view(decode) == scheduling_view(prefill)


def test_disaggregated_kserve_gangs_are_per_role(
    build: Any, manifest_validator: ManifestValidator
) -> None:
    manifests, _ = build.shapes["llmisvc-disaggregated"]()
    config, _ = read_scheduling(_spec("Coscheduling"))
    result = apply_conventions(typed(manifests), config, CONTEXT)
    (svc,) = handed(result)
    decode_group = svc["spec"]["labels"]["scheduling.x-k8s.io/pod-group"]
    prefill_group = svc["spec"]["prefill"]["labels"]["scheduling.x-k8s.io/pod-group"]
    assert decode_group != prefill_group
    groups = {o["metadata"]["name"]: o for o in result.gangs}
    assert set(groups) == {decode_group, prefill_group}
    assert groups[decode_group]["metadata"]["labels"]["modelplane.ai/role"] == "decode"
    assert groups[prefill_group]["metadata"]["labels"]["modelplane.ai/role"] == "prefill"
    for gang in groups.values():
        assert manifest_validator.validate(gang) == []
