"""The priority fallback chain and its guard rails."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions
from modelplane.core.kinds import pod_sites

from .support import handed, read_scheduling, typed


def _context(priority: str | None) -> TemplateContext:
    return TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", priority)


def _pod_specs(result: Any, build: Any) -> list[dict[str, Any]]:
    return [s for obj in handed(result) for site in pod_sites(obj) for _, s in site.specs]


@pytest.mark.parametrize(
    ("requested", "cluster_default", "expected"),
    [
        ("production-critical", "production-standard", "production-critical"),
        (None, "production-standard", "production-standard"),
        ("", "production-standard", "production-standard"),
        ("batch", None, "batch"),
        (None, None, None),
    ],
)
@pytest.mark.parametrize(
    "shape", ["deployment-unified", "lws-disaggregated", "llmisvc-disaggregated"]
)
def test_fallback_chain(
    requested: str | None, cluster_default: str | None, expected: str | None, shape: str, build: Any
) -> None:
    spec = {"defaultPriority": cluster_default} if cluster_default else {}
    config, _ = read_scheduling(spec)
    manifests, _ = build.shapes[shape]()
    result = apply_conventions(typed(manifests), config, _context(requested))
    assert result.ok
    for pod_spec in _pod_specs(result, build):
        assert pod_spec.get("priorityClassName") == expected
        assert ("priorityClassName" in pod_spec) == (expected is not None)


def test_priority_template_variable_uses_the_resolved_priority(build: Any) -> None:
    config, _ = read_scheduling(
        {
            "defaultPriority": "standard",
            "defaultLabels": {"example.com/priority": "{{ .Priority }}"},
        }
    )
    for requested, label in ((None, "standard"), ("critical", "critical")):
        result = apply_conventions(typed([build.deployment()]), config, _context(requested))
        assert handed(result)[0]["metadata"]["labels"]["example.com/priority"] == label


@pytest.mark.parametrize(
    ("spec", "requested"),
    [
        ({"allowedPriorities": ["batch", "standard"]}, "critical"),
        ({}, "system-node-critical"),
        ({}, "Not_A_Name"),
        (
            {"provider": "Kueue", "kueue": {"workloadPriorityClasses": ["p" * 70]}},
            "p" * 70,
        ),
    ],
)
def test_disallowed_priority_is_an_error(spec: dict[str, Any], requested: str, build: Any) -> None:
    config, _ = read_scheduling(spec)
    result = apply_conventions(typed([build.deployment()]), config, _context(requested))
    assert not result.ok
    (issue,) = result.issues
    assert (issue.severity, issue.reason, issue.path) == (
        "Error",
        "PriorityNotAllowed",
        "spec.priority",
    )
    for pod_spec in _pod_specs(result, build):
        assert "priorityClassName" not in pod_spec


def test_allowed_priority_passes(build: Any) -> None:
    config, _ = read_scheduling({"allowedPriorities": ["batch", "standard"]})
    for requested in ("batch", None):
        assert apply_conventions(typed([build.deployment()]), config, _context(requested)).ok


def test_no_priority_removes_a_template_priority(build: Any) -> None:
    template = build.pod_template(
        priorityClassName="sneaky", priority=1000000, preemptionPolicy="Never"
    )
    config, _ = read_scheduling(None)
    result = apply_conventions(typed([build.deployment(template=template)]), config, _context(None))
    (pod_spec,) = _pod_specs(result, build)
    assert "priorityClassName" not in pod_spec
    assert "priority" not in pod_spec
    assert "preemptionPolicy" not in pod_spec
    assert sorted(f.path for f in result.issues) == [
        "spec.template.spec.preemptionPolicy",
        "spec.template.spec.priority",
        "spec.template.spec.priorityClassName",
    ]
    assert {f.reason for f in result.issues} == {"PlatformKeyOverridden"}


@pytest.mark.parametrize(
    ("wpcs", "expected"),
    [(["production-standard"], "production-standard"), (["other"], None), ([], None)],
)
def test_kueue_workload_priority_class_label(
    wpcs: list[str], expected: str | None, build: Any
) -> None:
    spec: dict[str, Any] = {"provider": "Kueue", "defaultPriority": "production-standard"}
    if wpcs:
        spec["kueue"] = {"workloadPriorityClasses": wpcs}
    config, _ = read_scheduling(spec)
    result = apply_conventions(typed([build.lws()]), config, _context(None))
    labels = handed(result)[0]["metadata"]["labels"]
    assert labels.get("kueue.x-k8s.io/priority-class") == expected
