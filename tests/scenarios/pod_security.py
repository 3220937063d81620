"""Where pod specs and annotations sit in a rendered manifest, for checking them
against Pod Security `baseline` (`modelplane.core.pod_security`, the rules the fleet
scheduler checks a team's template with)."""

from collections.abc import Iterator
from typing import Any

from modelplane.core.pod_security import baseline_issues


def pod_specs(value: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec inside a manifest: any mapping with a `containers` list."""
    if isinstance(value, dict):
        if isinstance(value.get("containers"), list):
            yield value
        for item in value.values():
            yield from pod_specs(item)
    elif isinstance(value, list):
        for item in value:
            yield from pod_specs(item)


def annotations(value: Any) -> Iterator[dict[str, Any]]:
    """Every `annotations` mapping inside a manifest (pod templates' among them)."""
    if isinstance(value, dict):
        found = value.get("annotations")
        if isinstance(found, dict):
            yield found
        for item in value.values():
            yield from annotations(item)
    elif isinstance(value, list):
        for item in value:
            yield from annotations(item)


def violations(spec: dict[str, Any]) -> list[str]:
    """The fields of pod spec `spec` that `baseline` refuses, as paths; [] when it passes."""
    return [issue.path for issue in baseline_issues({"spec": spec}, "")]


def annotation_violations(found: dict[str, Any]) -> list[str]:
    """The AppArmor annotations among `found` that `baseline` refuses."""
    template = {"metadata": {"annotations": found}}
    return [issue.path for issue in baseline_issues(template, "")]
