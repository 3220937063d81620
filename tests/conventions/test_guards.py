"""Guard rails: issues for what a scheduler would silently mishandle."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions, replica_prerequisites

from .support import handed, read_scheduling, typed


def _context(priority: str | None = None, name: str = "kimi") -> TemplateContext:
    return TemplateContext("ml-team", name, "kimi-0", "prod-east", priority)


def _reasons(result: Any) -> list[tuple[str, str]]:
    return [(f.severity, f.reason) for f in result.issues]


# --- templates rendered for one replica -------------------------------------------------


@pytest.mark.parametrize(
    "labels", [{"example.com/owner": "{{ .Name }}!"}, {"example.com/owner": "-{{ .Priority }}"}]
)
def test_a_label_template_no_rendering_of_which_is_valid_is_refused_when_read(
    labels: dict[str, str], build: Any
) -> None:
    """Whatever the replica, these render an invalid label value: refused up front."""
    config, issues = read_scheduling({"defaultLabels": labels})
    (issue,) = issues
    assert (issue.severity, issue.reason) == ("Error", "InvalidSchedulingTemplate")
    assert issue.path == "spec.scheduling.defaultLabels[example.com/owner]"
    assert "every rendering of" in issue.message and "alphanumeric" in issue.message
    result = apply_conventions(typed([build.deployment()]), config, _context(name="kimi"))
    assert not result.ok


@pytest.mark.parametrize(
    ("labels", "name", "fragment"),
    [
        ({"example.com/owner": "{{ .Name }}"}, "n" * 64, "at most 63"),
        ({"example.com/owner": "team-{{ .Name }}"}, "x" * 60, "at most 63"),
    ],
)
def test_invalid_rendered_label_value_is_an_error(
    labels: dict[str, str], name: str, fragment: str, build: Any
) -> None:
    config, issues = read_scheduling({"defaultLabels": labels})
    assert issues == []
    result = apply_conventions(typed([build.deployment()]), config, _context(name=name))
    (issue,) = result.issues
    assert (issue.severity, issue.reason) == ("Error", "InvalidSchedulingTemplate")
    assert issue.path == "spec.scheduling.defaultLabels[example.com/owner]"
    assert fragment in issue.message
    assert "example.com/owner" not in handed(result)[0]["metadata"]["labels"]


def test_annotations_take_any_rendered_value(build: Any) -> None:
    config, _ = read_scheduling({"defaultAnnotations": {"example.com/owner": "{{ .Name }} !"}})
    result = apply_conventions(typed([build.deployment()]), config, _context(name="n" * 80))
    assert result.ok
    assert handed(result)[0]["metadata"]["annotations"]["example.com/owner"] == "n" * 80 + " !"


@pytest.mark.parametrize("provider", ["KAI", "Kueue", "Volcano"])
def test_queue_that_renders_empty_is_an_error(provider: str, build: Any) -> None:
    config, issues = read_scheduling({"provider": provider, "queue": "{{ .Priority }}"})
    assert issues == []
    result = apply_conventions(typed([build.lws()]), config, _context(None))
    errors = [f for f in result.issues if f.severity == "Error"]
    assert [(f.reason, f.path) for f in errors] == [
        ("InvalidSchedulingTemplate", "spec.scheduling.queue")
    ]
    assert "renders empty" in errors[0].message
    assert apply_conventions(typed([build.lws()]), config, _context("batch")).workloads


@pytest.mark.parametrize(("provider", "ok"), [("KAI", False), ("Kueue", False), ("Volcano", True)])
def test_queue_length_limits_per_provider(provider: str, ok: bool, build: Any) -> None:
    config, _ = read_scheduling({"provider": provider, "queue": "{{ .Name }}"})
    result = apply_conventions(typed([build.deployment()]), config, _context("p", name="q" * 70))
    assert result.ok is ok


def test_oversized_annotations_are_an_error(build: Any) -> None:
    config, _ = read_scheduling({"defaultAnnotations": {"example.com/blob": "{{ .Name }}"}})
    result = apply_conventions(typed([build.deployment()]), config, _context(name="x" * 300_000))
    assert ("Error", "InvalidSchedulingTemplate") in _reasons(result)
    assert not result.ok


# --- KAI quota for non-preemptible work -------------------------------------------------

PRIORITY_CLASSES = [
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "low"},
        "value": 10,
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    },
]


@pytest.mark.parametrize(
    ("kai", "queue", "priority", "kind", "warned"),
    [
        # Undeclared quota: only KAI's own default-queue is known to have none.
        ({}, None, None, "deployment", True),  # inference (125) by default
        ({}, None, None, "lws", False),  # train (50) by default
        ({}, "team-a", None, "deployment", False),
        ({}, None, "build", "lws", True),
        ({}, None, "build-preemptible", "deployment", False),
        ({}, None, "high", "lws", True),  # supplied PriorityClass, value 1000
        ({}, None, "low", "deployment", False),  # supplied PriorityClass, value 10
        ({}, None, "mystery", "deployment", True),  # unknown value
        # Declared quota.
        ({"queuesWithQuota": ["team-a"]}, "team-a", "high", "deployment", False),
        ({"queuesWithQuota": ["team-a"]}, "team-b", "high", "deployment", True),
        ({"queuesWithQuota": ["team-a"]}, "team-b", None, "lws", False),
        ({"queuesWithQuota": []}, "team-b", "mystery", "lws", True),
        ({"queuesWithQuota": ["default-queue"]}, None, None, "deployment", False),
        # Declared preemptible priorities win over values.
        ({"preemptiblePriorities": ["high"]}, None, "high", "deployment", False),
        ({"preemptiblePriorities": ["mystery"]}, None, "mystery", "deployment", False),
    ],
)
def test_kai_non_preemptible_work_without_quota(
    kai: dict[str, Any],
    queue: str | None,
    priority: str | None,
    kind: str,
    warned: bool,
    build: Any,
) -> None:
    spec: dict[str, Any] = {"provider": "KAI", "kai": kai}
    if queue:
        spec["queue"] = queue
    config, issues = read_scheduling(spec)
    assert issues == []
    result = apply_conventions(
        typed([getattr(build, kind)()]),
        config,
        _context(priority),
        priority_classes=PRIORITY_CLASSES,
    )
    quota = [f for f in result.issues if f.reason == "QueueWithoutQuota"]
    assert bool(quota) == warned, result.issues
    assert all(f.severity == "Warning" for f in quota)
    assert result.ok


@pytest.mark.parametrize(("label", "warned"), [("preemptible", False), ("non-preemptible", True)])
def test_kai_platform_preemptibility_label_decides(label: str, warned: bool, build: Any) -> None:
    config, _ = read_scheduling(
        {"provider": "KAI", "defaultLabels": {"kai.scheduler/preemptibility": label}}
    )
    result = apply_conventions(
        typed([build.lws()]), config, _context("high"), priority_classes=PRIORITY_CLASSES
    )
    assert any(f.reason == "QueueWithoutQuota" for f in result.issues) == warned


def test_kai_quota_is_checked_per_kserve_workload(build: Any) -> None:
    svc = build.llmisvc(
        role="decode",
        main=build.kserve_block(worker=True, parallelism=build.pipeline2),
        prefill=build.kserve_block(worker=False),
    )
    config, _ = read_scheduling({"provider": "KAI"})
    result = apply_conventions(typed([svc]), config, _context(None))
    quota = [f for f in result.issues if f.reason == "QueueWithoutQuota"]
    # KServe makes an LWS (train by default) for decode and a Deployment
    # (inference by default) for prefill: only prefill is non-preemptible.
    assert len(quota) == 1
    assert "(prefill)" in quota[0].message


@pytest.mark.parametrize(
    ("spec", "queue"),
    [
        ({}, "default-queue"),
        ({"defaultLabels": {"project": "{{ .Namespace }}"}}, "ml-team"),
        (
            {"defaultLabels": {"project": "{{ .Namespace }}", "kai.scheduler/node-pool": "h100"}},
            "ml-team-h100",
        ),
        # An empty project is none to KAI.
        ({"defaultLabels": {"project": ""}}, "default-queue"),
        # The queue label wins over the project, on the owner as on the pod.
        ({"queue": "gold", "defaultLabels": {"project": "{{ .Namespace }}"}}, "gold"),
        ({"defaultLabels": {"kai.scheduler/queue": "gold", "project": "x"}}, "gold"),
    ],
)
def test_kai_queue_follows_the_podgroupers_fallback(
    spec: dict[str, Any], queue: str, build: Any
) -> None:
    """With no queue label, KAI's podgrouper reads the queue from a `project` label
    (`<project>-<node pool>` with a node-pool label): the queue Modelplane observes
    and checks for quota is that one, not `default-queue`."""
    config, issues = read_scheduling(
        {"provider": "KAI", "kai": {"queuesWithQuota": [queue]}, **spec}
    )
    assert issues == []
    ref, _ = replica_prerequisites(config, _context(None), "ml-team")
    assert ref is not None and (ref.kind, ref.name) == ("Queue", queue)
    # A Deployment without priority is non-preemptible: warned unless its queue has quota.
    result = apply_conventions(typed([build.deployment()]), config, _context(None))
    assert [f.reason for f in result.issues if f.reason == "QueueWithoutQuota"] == []
    unlisted, _ = read_scheduling({"provider": "KAI", "kai": {"queuesWithQuota": []}, **spec})
    result = apply_conventions(typed([build.deployment()]), unlisted, _context(None))
    (warned,) = [f for f in result.issues if f.reason == "QueueWithoutQuota"]
    assert f"KAI queue {queue!r}" in warned.message


# --- names KServe and LWS derive --------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "kind", "name", "replicas", "too_long"),
    [
        ("Kueue", "lws", "l" * 39, 1, False),
        ("Kueue", "lws", "l" * 40, 1, True),
        ("Default", "lws", "l" * 40, 1, False),
        ("Default", "lws", "l" * 51, 1, False),
        ("Default", "lws", "l" * 51, 10, True),
        ("Default", "lws", "l" * 52, 1, True),
        ("Kueue", "deployment", "d" * 60, 1, False),
        # <name>-kserve-mn-prefill must fit 39 under Kueue: 21 characters.
        ("Kueue", "llmisvc-prefill", "s" * 21, 1, False),
        ("Kueue", "llmisvc-prefill", "s" * 22, 1, True),
        # <name>-kserve-mn: 29 characters under Kueue.
        ("Kueue", "llmisvc", "s" * 29, 1, False),
        ("Kueue", "llmisvc", "s" * 30, 1, True),
        ("Volcano", "llmisvc", "s" * 41, 1, False),
        ("Volcano", "llmisvc", "s" * 42, 1, True),
        # A single-node service becomes a Deployment: no LWS limit applies.
        ("Kueue", "llmisvc-single", "s" * 50, 1, False),
    ],
)
def test_lws_name_limits(
    provider: str, kind: str, name: str, replicas: int, too_long: bool, build: Any
) -> None:
    multi = build.kserve_block(worker=True, parallelism=build.pipeline2, replicas=replicas)
    manifest = {
        "lws": lambda: build.lws(name=name, replicas=replicas),
        "deployment": lambda: build.deployment(name=name),
        "llmisvc": lambda: build.llmisvc(name=name, main=multi),
        "llmisvc-prefill": lambda: build.llmisvc(
            name=name, role="decode", main=multi, prefill=multi
        ),
        "llmisvc-single": lambda: build.llmisvc(name=name),
    }[kind]()
    config, _ = read_scheduling({"provider": provider})
    result = apply_conventions(typed([manifest]), config, _context("p"))
    names = [f for f in result.issues if f.reason == "NameTooLong"]
    assert bool(names) == too_long, result.issues
    assert all(f.severity == "Error" and f.path == "metadata.name" for f in names)


def test_kueues_lws_name_limit_says_when_it_binds(build: Any) -> None:
    # Since Kueue 0.18 the identifiers are annotations by default: the message must
    # not blame a label that default Kueue no longer writes.
    config, _ = read_scheduling({"provider": "Kueue"})
    manifest = build.lws(name="s" * 40, replicas=1)
    result = apply_conventions(typed([manifest]), config, _context("p"))
    (issue,) = [f for f in result.issues if f.reason == "NameTooLong"]
    assert "WorkloadIdentifierAnnotations gate off" in issue.message
    assert "at most 39" in issue.message


# --- Volcano and KServe -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("queue", "lws_provider", "multi_node", "warned"),
    [
        ("gpu", True, True, True),
        ("default", True, True, False),
        ("gpu", False, True, False),
        ("gpu", True, False, False),
    ],
)
def test_volcano_queue_through_kserve(
    queue: str, lws_provider: bool, multi_node: bool, warned: bool, build: Any
) -> None:
    config, _ = read_scheduling(
        {"provider": "Volcano", "queue": queue, "volcano": {"lwsGangScheduling": lws_provider}}
    )
    svc = build.llmisvc(main=build.kserve_block(worker=multi_node, parallelism=build.pipeline2))
    result = apply_conventions(typed([svc]), config, _context("p"))
    found = [f for f in result.issues if f.reason == "QueueNotExpressible"]
    assert bool(found) == warned
    assert handed(result)[0]["spec"]["annotations"]["scheduling.volcano.sh/queue-name"] == queue
    assert "annotations" not in handed(result)[0]["metadata"]


@pytest.mark.parametrize(
    ("spec", "kind", "priority", "warned"),
    [
        ({}, "lws", "p", True),
        ({}, "llmisvc-multi", "p", True),
        # The LWS controller's provider makes its PodGroups whatever gang.enabled says.
        ({"gang": {"enabled": False}}, "lws", "p", True),
        ({}, "lws", None, False),
        ({"volcano": {"lwsGangScheduling": False}}, "lws", "p", False),
        ({"volcano": {"lwsGangScheduling": False}}, "llmisvc-multi", "p", False),
        # Volcano makes a Deployment pod's PodGroup itself, from the pod's priority.
        ({}, "deployment", "p", False),
        ({}, "llmisvc-single", "p", False),
    ],
)
def test_volcano_lws_priority(
    spec: dict[str, Any], kind: str, priority: str | None, warned: bool, build: Any
) -> None:
    """The LWS Volcano provider's PodGroups carry no priorityClassName, and Volcano
    takes a gang's priority from its PodGroup alone: each such LWS is named, with the
    setting under which Modelplane's own PodGroup carries the priority."""
    manifest = {
        "lws": lambda: build.lws(size=4),
        "llmisvc-multi": lambda: build.llmisvc(
            main=build.kserve_block(worker=True, parallelism=build.pipeline2)
        ),
        "deployment": build.deployment,
        "llmisvc-single": build.llmisvc,
    }[kind]()
    config, issues = read_scheduling({"provider": "Volcano", **spec})
    assert issues == []
    result = apply_conventions(typed([manifest]), config, _context(priority))
    found = [f for f in result.issues if f.reason == "PriorityNotExpressible"]
    assert len(found) == int(warned), result.issues
    for issue in found:
        assert (issue.severity, issue.path) == (
            "Warning",
            "spec.scheduling.volcano.lwsGangScheduling",
        )
        assert f"not {priority!r}" in issue.message
        assert "volcano.lwsGangScheduling: false" in issue.message
    # With Modelplane's own PodGroup, the gang does carry the priority.
    for group in result.gangs:
        assert group["spec"]["priorityClassName"] == priority
