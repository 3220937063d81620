"""Platform-owned keys always win over what an ML team's pod template says."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions
from modelplane.core.kinds import pod_sites

from .support import handed, read_scheduling, typed

CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", None)


def _run(spec: dict[str, Any], manifests: list[dict[str, Any]]) -> Any:
    config, issues = read_scheduling(spec)
    assert issues == []
    return apply_conventions(typed(manifests), config, CONTEXT)


@pytest.mark.parametrize(
    ("spec", "section", "key", "want"),
    [
        (
            {"defaultLabels": {"example.com/team": "{{ .Namespace }}"}},
            "labels",
            "example.com/team",
            "ml-team",
        ),
        (
            {"defaultAnnotations": {"example.com/cost": "{{ .Cluster }}"}},
            "annotations",
            "example.com/cost",
            "prod-east",
        ),
        (
            {"provider": "KAI", "queue": "gold", "kai": {"queuesWithQuota": ["gold"]}},
            "labels",
            "kai.scheduler/queue",
            "gold",
        ),
        (
            {"provider": "Volcano", "queue": "gold"},
            "annotations",
            "scheduling.volcano.sh/queue-name",
            "gold",
        ),
    ],
)
@pytest.mark.parametrize("kind", ["deployment", "lws", "llmisvc"])
def test_template_value_under_a_platform_key_is_overridden(
    spec: dict[str, Any], section: str, key: str, want: str, kind: str, build: Any
) -> None:
    extra = {section: {key: "team-choice"}}
    if kind == "llmisvc":
        manifest = build.llmisvc(main=build.kserve_block(worker=True, **extra))
    else:
        template = build.pod_template(**extra)
        manifest = getattr(build, kind)(template=template)
    result = _run(spec, [manifest])
    sites = pod_sites(handed(result)[0])
    for site in sites:
        assert site.metadata[section][key] == want
    overridden = [f for f in result.issues if f.reason == "PlatformKeyOverridden"]
    assert len(overridden) == len(sites)
    for issue in overridden:
        assert issue.severity == "Warning"
        assert issue.path.endswith(f".{section}[{key}]")
        assert key in issue.message and "team-choice" in issue.message


def test_same_value_is_not_reported(build: Any) -> None:
    template = build.pod_template(labels={"example.com/team": "ml-team"})
    result = _run(
        {"defaultLabels": {"example.com/team": "{{ .Namespace }}"}},
        [build.deployment(template=template)],
    )
    assert result.issues == []


@pytest.mark.parametrize(
    ("spec", "section", "key"),
    [
        (
            {"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}},
            "labels",
            "kai.scheduler/queue",
        ),
        (
            {"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}},
            "labels",
            "priorityClassName",
        ),
        # KAI reads an unprefixed `project` label as the queue when no queue label is set.
        (
            {"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}},
            "labels",
            "project",
        ),
        # KAI's GPU sharing would bind a slice of a GPU outside the replica's claim.
        (
            {"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}},
            "annotations",
            "gpu-fraction",
        ),
        (
            {"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}},
            "annotations",
            "gpu-memory",
        ),
        (
            {"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}},
            "labels",
            "runai-gpu-group/0",
        ),
        (
            {"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}},
            "annotations",
            "nvidia.com/container.engine.gpu-memory.request",
        ),
        ({"provider": "Kueue", "queue": "q"}, "labels", "kueue.x-k8s.io/queue-name"),
        ({"provider": "Kueue"}, "labels", "kueue.x-k8s.io/priority-class"),
        ({"provider": "Volcano"}, "annotations", "scheduling.volcano.sh/queue-name"),
        ({"provider": "Volcano"}, "annotations", "scheduling.k8s.io/group-name"),
        ({"provider": "Coscheduling"}, "labels", "scheduling.x-k8s.io/pod-group"),
    ],
)
def test_scheduler_keys_the_platform_does_not_set_are_removed(
    spec: dict[str, Any], section: str, key: str, build: Any
) -> None:
    template = build.pod_template(**{section: {key: "team-choice"}})
    result = _run(spec, [build.lws(size=1, template=template)])
    for site in pod_sites(handed(result)[0]):
        assert key not in site.metadata.get(section, {})
    reasons = {(f.reason, f.severity) for f in result.issues if key in f.path}
    assert reasons == {("PlatformKeyOverridden", "Warning")}


@pytest.mark.parametrize(
    ("spec", "section"),
    [
        # A queue label set: KAI never reads `project`, so it is the team's own label.
        ({"provider": "KAI", "queue": "gold", "kai": {"queuesWithQuota": ["gold"]}}, "labels"),
        (
            {
                "provider": "KAI",
                "defaultLabels": {"kai.scheduler/queue": "gold"},
                "kai": {"queuesWithQuota": ["gold"]},
            },
            "labels",
        ),
        (
            {
                "provider": "KAI",
                "defaultLabels": {"example.com/queue": "gold"},
                "kai": {"queueLabelKey": "example.com/queue", "queuesWithQuota": ["gold"]},
            },
            "labels",
        ),
        # KAI reads `project` as a label only.
        ({"provider": "KAI", "kai": {"queuesWithQuota": ["default-queue"]}}, "annotations"),
    ],
)
def test_a_kai_project_key_kai_does_not_read_is_the_teams(
    spec: dict[str, Any], section: str, build: Any
) -> None:
    template = build.pod_template(**{section: {"project": "team-choice"}})
    result = _run(spec, [build.lws(size=1, template=template)])
    for site in pod_sites(handed(result)[0]):
        assert site.metadata[section]["project"] == "team-choice"
    assert not [f for f in result.issues if "project" in f.path]


def test_unrelated_keys_pass_through(build: Any) -> None:
    template = build.pod_template(
        labels={"kai.scheduler/queue": "kept"}, annotations={"prometheus.io/scrape": "true"}
    )
    result = _run({"provider": "Kueue"}, [build.deployment(template=template)])
    meta = handed(result)[0]["spec"]["template"]["metadata"]
    assert meta["labels"]["kai.scheduler/queue"] == "kept"
    assert meta["annotations"] == {"prometheus.io/scrape": "true"}
    assert result.issues == []


@pytest.mark.parametrize(
    ("provider", "existing", "want", "reported"),
    [
        ("KAI", "default-scheduler", "kai-scheduler", True),
        ("Volcano", "volcano", "volcano", False),
        ("Default", "my-scheduler", None, True),
        ("Kueue", "default-scheduler", "default-scheduler", False),
    ],
)
def test_scheduler_name_is_platform_owned(
    provider: str, existing: str, want: str | None, reported: bool, build: Any
) -> None:
    template = build.pod_template(schedulerName=existing)
    spec: dict[str, Any] = {"provider": provider}
    if provider == "KAI":
        spec["kai"] = {"queuesWithQuota": ["default-queue"]}
    result = _run(spec, [build.deployment(template=template)])
    assert handed(result)[0]["spec"]["template"]["spec"].get("schedulerName") == want
    fields = [f.path for f in result.issues]
    assert fields == (["spec.template.spec.schedulerName"] if reported else [])


def test_object_label_override_is_reported(build: Any) -> None:
    manifest = build.lws()
    manifest["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "elsewhere"
    result = _run({"provider": "Kueue", "queue": "mine"}, [manifest])
    assert handed(result)[0]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "mine"
    (issue,) = result.issues
    assert issue.path == "metadata.labels[kueue.x-k8s.io/queue-name]"
