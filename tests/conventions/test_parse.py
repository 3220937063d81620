"""parse_scheduling: the validator behind an InferenceCluster's own conditions.

The generated model refuses what the XRD's schema refuses (types, enums, name
patterns, lengths); parse_scheduling checks what the schema cannot say.
"""

from typing import Any

import pytest
from modelplane_models.inference_cluster import InferenceCluster

from modelplane.conventions import (
    SchedulingConfig,
    TemplateContext,
    apply_conventions,
)
from modelplane.conventions.schedulers import KAI
from modelplane.core.issues import InvalidInputError, Issue, parse_object
from modelplane.core.vocabulary import Reason

from .support import read_scheduling, typed


def _by_field(issues: list[Issue]) -> dict[str, Issue]:
    return {f.path: f for f in issues}


def test_absent_block_is_the_default_scheduler() -> None:
    for spec in (None, {}):
        config, issues = read_scheduling(spec)
        assert issues == []
        assert config == SchedulingConfig()
        assert config.scheduler.name == "Default"
        assert config.scheduler_name is None
        assert config.gang_enabled


@pytest.mark.parametrize(
    ("provider", "scheduler"),
    [
        ("Default", None),
        ("KAI", "kai-scheduler"),
        ("Kueue", None),
        ("Volcano", "volcano"),
        ("Coscheduling", "scheduler-plugins-scheduler"),
    ],
)
def test_provider_default_scheduler_name(provider: str, scheduler: str | None) -> None:
    config, issues = read_scheduling({"provider": provider})
    assert issues == []
    assert config.scheduler_name == scheduler
    explicit, _ = read_scheduling({"provider": provider, "schedulerName": "my-sched"})
    assert explicit.scheduler_name == "my-sched"


def test_full_kai_block_parses() -> None:
    config, issues = read_scheduling(
        {
            "provider": "KAI",
            "queue": "{{ .Namespace }}",
            "defaultPriority": "production-standard",
            "allowedPriorities": ["production-critical", "production-standard", "batch"],
            "gang": {"enabled": False},
            "defaultLabels": {"runai/project": "{{ .Namespace }}"},
            "defaultAnnotations": {"example.com/cost-center": "{{ .Cluster }}"},
            "kai": {
                "queuesWithQuota": ["b", "a", "a"],
                "preemptiblePriorities": ["batch"],
                "podGrouper": "Automatic",
            },
        }
    )
    assert issues == []
    assert config.queue is not None and config.queue.source == "{{ .Namespace }}"
    assert config.default_priority == "production-standard"
    assert config.allowed_priorities == ("batch", "production-critical", "production-standard")
    assert not config.gang_enabled
    assert config.scheduler == KAI(
        queues_with_quota=frozenset({"a", "b"}),
        preemptible_priorities=frozenset({"batch"}),
    )
    assert [k for k, _ in config.default_labels] == ["runai/project"]


ERROR_CASES: list[tuple[dict[str, Any], str, str]] = [
    (
        {"provider": "KAI", "queue": "{{ .Team }}"},
        "spec.scheduling.queue",
        Reason.INVALID_SCHEDULING_TEMPLATE,
    ),
    (
        {"provider": "Kueue", "queue": "Not_A_Queue"},
        "spec.scheduling.queue",
        Reason.INVALID_SCHEDULING_TEMPLATE,
    ),
    (
        {"provider": "KAI", "queue": "q" * 64},
        "spec.scheduling.queue",
        Reason.INVALID_SCHEDULING_TEMPLATE,
    ),
    (
        {"defaultLabels": {"team": "{{ .Owner }}"}},
        "spec.scheduling.defaultLabels[team]",
        Reason.INVALID_SCHEDULING_TEMPLATE,
    ),
    (
        {"defaultLabels": {"team": "has spaces"}},
        "spec.scheduling.defaultLabels[team]",
        Reason.INVALID_SCHEDULING_TEMPLATE,
    ),
    (
        {"defaultLabels": {"bad key!": "x"}},
        "spec.scheduling.defaultLabels[bad key!]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"defaultAnnotations": {"modelplane.ai/role": "x"}},
        "spec.scheduling.defaultAnnotations[modelplane.ai/role]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"defaultAnnotations": {"a/b": "{{ .Name | quote }}"}},
        "spec.scheduling.defaultAnnotations[a/b]",
        Reason.INVALID_SCHEDULING_TEMPLATE,
    ),
    (
        {"defaultPriority": "system-cluster-critical"},
        "spec.scheduling.defaultPriority",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"defaultPriority": "gold", "allowedPriorities": ["silver"]},
        "spec.scheduling.defaultPriority",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"provider": "KAI", "queue": "q", "defaultLabels": {"kai.scheduler/queue": "other"}},
        "spec.scheduling.defaultLabels[kai.scheduler/queue]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"provider": "Kueue", "queue": "q", "defaultLabels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec.scheduling.defaultLabels[kueue.x-k8s.io/queue-name]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {
            "provider": "Volcano",
            "queue": "q",
            "defaultAnnotations": {"scheduling.volcano.sh/queue-name": "q"},
        },
        "spec.scheduling.defaultAnnotations[scheduling.volcano.sh/queue-name]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"provider": "Coscheduling", "defaultLabels": {"scheduling.x-k8s.io/pod-group": "g"}},
        "spec.scheduling.defaultLabels[scheduling.x-k8s.io/pod-group]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"provider": "KAI", "defaultAnnotations": {"pod-group-name": "g"}},
        "spec.scheduling.defaultAnnotations[pod-group-name]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"provider": "Volcano", "defaultAnnotations": {"scheduling.k8s.io/group-name": "g"}},
        "spec.scheduling.defaultAnnotations[scheduling.k8s.io/group-name]",
        Reason.INVALID_SCHEDULING,
    ),
    (
        {"provider": "Kueue", "kueue": {"workloadPriorityClasses": ["Bad!"]}},
        "spec.scheduling.kueue.workloadPriorityClasses[0]",
        Reason.INVALID_SCHEDULING,
    ),
]


@pytest.mark.parametrize(("spec", "field", "reason"), ERROR_CASES)
def test_invalid_blocks_are_errors_on_the_field(
    spec: dict[str, Any], field: str, reason: str
) -> None:
    config, issues = read_scheduling(spec)
    issue = _by_field(issues)[field]
    assert issue.severity == "Error"
    assert issue.reason == reason
    assert issue in config.errors


# What the schema says; the model refuses it, naming the field, before any check here.
SCHEMA_CASES: list[tuple[Any, str]] = [
    (["KAI"], "spec.scheduling"),
    ({"provider": "Slurm"}, "spec.scheduling.provider"),
    ({"schedulerName": "Bad_Name"}, "spec.scheduling.schedulerName"),
    ({"schedulerName": 7}, "spec.scheduling.schedulerName"),
    ({"provider": "KAI", "queue": ""}, "spec.scheduling.queue"),
    ({"defaultLabels": ["team"]}, "spec.scheduling.defaultLabels"),
    ({"defaultLabels": {"team": 3}}, "spec.scheduling.defaultLabels.team"),
    ({"allowedPriorities": ["ok", "Not OK"]}, "spec.scheduling.allowedPriorities[1]"),
    ({"provider": "KAI", "kai": {"podGrouper": "Manual"}}, "spec.scheduling.kai.podGrouper"),
    (
        {"provider": "KAI", "kai": {"queuesWithQuota": "team-a"}},
        "spec.scheduling.kai.queuesWithQuota",
    ),
]


@pytest.mark.parametrize(("block", "field"), SCHEMA_CASES)
def test_what_the_schema_says_the_model_refuses(block: Any, field: str) -> None:
    cluster = {
        "metadata": {"name": "a"},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": "a", "namespace": "b"}},
            },
            "nodePools": [{"name": "h100", "className": "h100", "nodeCount": 1}],
            "scheduling": block,
        },
    }
    with pytest.raises(InvalidInputError) as caught:
        parse_object(InferenceCluster, cluster)
    assert [issue.path for issue in caught.value.issues] == [field]


WARNING_CASES: list[tuple[dict[str, Any], str]] = [
    ({"provider": "Default", "queue": "q"}, "spec.scheduling.queue"),
    ({"provider": "Coscheduling", "queue": "q"}, "spec.scheduling.queue"),
    ({"provider": "Kueue", "kai": {"queuesWithQuota": []}}, "spec.scheduling.kai"),
    ({"provider": "KAI", "volcano": {}}, "spec.scheduling.volcano"),
    ({"provider": "Default", "gang": {"enabled": True}}, "spec.scheduling.gang.enabled"),
    (
        {"provider": "KAI", "defaultLabels": {"runai/queue": "{{ .Namespace }}"}},
        "spec.scheduling.defaultLabels[runai/queue]",
    ),
    (
        {"provider": "KAI", "defaultAnnotations": {"kai.scheduler/queue": "q"}},
        "spec.scheduling.defaultAnnotations[kai.scheduler/queue]",
    ),
    (
        {"provider": "KAI", "defaultAnnotations": {"project": "q"}},
        "spec.scheduling.defaultAnnotations[project]",
    ),
    (
        {"provider": "Kueue", "defaultAnnotations": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec.scheduling.defaultAnnotations[kueue.x-k8s.io/queue-name]",
    ),
    (
        {"provider": "Volcano", "defaultLabels": {"scheduling.volcano.sh/queue-name": "q"}},
        "spec.scheduling.defaultLabels[scheduling.volcano.sh/queue-name]",
    ),
]


@pytest.mark.parametrize(("spec", "field"), WARNING_CASES)
def test_ignored_or_misplaced_settings_are_warnings(spec: dict[str, Any], field: str) -> None:
    config, issues = read_scheduling(spec)
    issue = _by_field(issues)[field]
    assert issue.severity == "Warning"
    assert issue.reason == Reason.SCHEDULING_FIELD_IGNORED
    assert config.errors == ()


def test_ignored_queue_is_dropped() -> None:
    config, _ = read_scheduling({"provider": "Coscheduling", "queue": "q"})
    assert config.queue is None


def test_legacy_queue_key_is_fine_when_pinned() -> None:
    _, issues = read_scheduling(
        {
            "provider": "KAI",
            "defaultLabels": {"runai/queue": "{{ .Namespace }}"},
            "kai": {"queueLabelKey": "runai/queue"},
        }
    )
    assert issues == []


def test_invalid_entries_are_dropped_and_the_rest_kept() -> None:
    config, _ = read_scheduling({"defaultLabels": {"team": "{{ .Owner }}", "tier": "gold"}})
    assert [k for k, _ in config.default_labels] == ["tier"]


def test_config_errors_block_rendering() -> None:
    config, issues = read_scheduling({"provider": "KAI", "queue": "{{ .Owner }}"})
    context = TemplateContext("ml", "kimi", "kimi-0", "c", None)
    result = apply_conventions(typed([]), config, context)
    assert not result.ok
    assert [f for f in result.issues if f.severity == "Error"] == [
        f for f in issues if f.severity == "Error"
    ]


def test_parsing_is_deterministic() -> None:
    spec = {
        "provider": "KAI",
        "defaultLabels": {"b": "2", "a": "1", "c": "{{ .Name }}"},
        "kai": {"queuesWithQuota": ["z", "y"]},
    }
    assert read_scheduling(spec) == read_scheduling(dict(reversed(list(spec.items()))))
