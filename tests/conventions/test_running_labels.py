"""Labels a scheduler refuses to change on a running workload keep their observed value.

Kueue's webhooks (v0.19.2) refuse, on a Deployment or LeaderWorkerSet update: a
queue-name change once it has ready replicas, and its removal at any time; adding
a priority-class once it has ready replicas, and its removal at any time. A
refused update blocks every later one, so the conventions keep what the cluster
holds there and say so; every other change still goes through.
"""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions

from .support import handed, read_scheduling, typed

QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"
KEY = "workload-0-workers"
BLOCK: dict[str, Any] = {
    "provider": "Kueue",
    "queue": "{{ .Namespace }}-new",
    "defaultLabels": {"example.com/team": "{{ .Namespace }}"},
    "kueue": {"workloadPriorityClasses": ["high", "low"]},
}
NEW = "ml-team-new"


def _observed(
    labels: Any, ready: Any = 1, kind: str = "Deployment", name: str = "kimi-0-workers"
) -> dict[str, Any]:
    return {
        "kind": kind,
        "metadata": {"name": name, "labels": labels},
        "status": {"readyReplicas": ready},
    }


def _apply(manifest: dict[str, Any], observed: Any, priority: str | None = "high") -> Any:
    config, issues = read_scheduling(BLOCK)
    assert issues == []
    context = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", priority)
    return apply_conventions(typed([manifest]), config, context, running={KEY: observed})


@pytest.mark.parametrize(
    ("observed", "priority", "queue", "priority_label", "kept"),
    [
        # Nothing read back yet, or nothing different: the labels as configured.
        (None, "high", NEW, "high", []),
        (_observed({QUEUE: NEW, PRIORITY: "high"}), "high", NEW, "high", []),
        # The queue: kept while a replica is ready; free to move while none is.
        (
            _observed({QUEUE: "old", PRIORITY: "high"}, 2),
            "high",
            "old",
            "high",
            ["spec.scheduling.queue"],
        ),
        (
            _observed({QUEUE: "old", PRIORITY: "high"}, 1.0),
            "high",
            "old",
            "high",
            ["spec.scheduling.queue"],
        ),
        (_observed({QUEUE: "old", PRIORITY: "high"}, 0), "high", NEW, "high", []),
        # A queue label Kueue never had is not added to a running workload either.
        (_observed({PRIORITY: "high"}), "high", None, "high", ["spec.scheduling.queue"]),
        # The priority: changed between listed classes freely, added only while no
        # replica is ready, never removed.
        (_observed({QUEUE: NEW, PRIORITY: "low"}), "high", NEW, "high", []),
        (_observed({QUEUE: NEW}), "high", NEW, None, ["spec.priority"]),
        (_observed({QUEUE: NEW}, 0), "high", NEW, "high", []),
        (_observed({QUEUE: NEW, PRIORITY: "high"}, 0), "other", NEW, "high", ["spec.priority"]),
        # Bad read-backs count as no labels and no ready replica.
        (_observed("not a map", "3"), "high", NEW, "high", []),
        (_observed({QUEUE: 7, PRIORITY: ["x"]}, True), "high", NEW, "high", []),
        ({"kind": "Deployment", "metadata": "x", "status": "y"}, "high", NEW, "high", []),
        # Another object under the same key (renamed, or another kind) is a new object.
        (_observed({QUEUE: "old"}, 1, name="kimi-0-other"), "high", NEW, "high", []),
        (_observed({QUEUE: "old"}, 1, kind="LeaderWorkerSet"), "high", NEW, "high", []),
    ],
)
def test_a_running_deployment_keeps_what_kueue_refuses_to_change(
    observed: Any,
    priority: str,
    queue: str | None,
    priority_label: str | None,
    kept: list[str],
    build: Any,
) -> None:
    result = _apply(build.deployment(), observed, priority)
    assert result.ok, result.issues
    (manifest,) = handed(result)
    labels = manifest["metadata"]["labels"]
    assert (labels.get(QUEUE), labels.get(PRIORITY)) == (queue, priority_label)
    # Every other change reaches the running workload.
    assert labels["example.com/team"] == "ml-team"
    warned = [i for i in result.issues if i.reason == "SchedulingLabelKept"]
    assert [i.path for i in warned] == kept
    assert all(i.severity == "Warning" for i in warned)


def test_the_warning_says_what_is_kept_and_when_the_change_lands(build: Any) -> None:
    result = _apply(build.deployment(), _observed({QUEUE: "old", PRIORITY: "high"}, 2))
    (issue,) = [i for i in result.issues if i.reason == "SchedulingLabelKept"]
    assert f"Deployment kimi-0-workers: keeps {QUEUE}=old" in issue.message
    assert f"it takes {QUEUE}={NEW} once it has no ready replica" in issue.message
    removed = _apply(build.deployment(), _observed({QUEUE: NEW, PRIORITY: "high"}, 0), "other")
    (issue,) = [i for i in removed.issues if i.reason == "SchedulingLabelKept"]
    assert f"replicas placed from now on get no {PRIORITY} label" in issue.message


def test_a_running_llm_inference_service_keeps_its_labels_whatever_its_status(
    build: Any,
) -> None:
    # KServe copies the labels onto its own Deployment or LWS, whose readiness the
    # read-back of the service does not tell: it counts as running once it exists.
    observed = {
        "kind": "LLMInferenceService",
        "metadata": {"name": "kimi-0", "labels": {QUEUE: "old", PRIORITY: "high"}},
    }
    result = _apply(build.llmisvc(), observed)
    (manifest,) = handed(result)
    assert manifest["metadata"]["labels"][QUEUE] == "old"
    (issue,) = [i for i in result.issues if i.reason == "SchedulingLabelKept"]
    assert f"replicas placed from now on get {QUEUE}={NEW}" in issue.message


def test_other_schedulers_change_their_labels_in_place(build: Any) -> None:
    config, _ = read_scheduling({"provider": "KAI", "queue": "{{ .Namespace }}-new"})
    observed = _observed({"kai.scheduler/queue": "old"}, 2)
    context = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", None)
    result = apply_conventions(
        typed([build.deployment()]), config, context, running={KEY: observed}
    )
    (manifest,) = handed(result)
    assert manifest["metadata"]["labels"]["kai.scheduler/queue"] == NEW
