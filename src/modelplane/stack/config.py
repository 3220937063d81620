"""`InferenceCluster.spec.stack`, validated: the mode and the chart version overrides.

The schema bounds the map; what it cannot say is checked here, each problem an
Issue naming its field: an override for a component no registry knows, and a
version that is not a semantic version (strict semver 2.0.0, optionally with the
leading `v` some charts publish theirs with, as Helm reads chart versions).
The component list is the registries' (the stack's own components and every
scheduler module's), so adding a scheduler never touches the XRD.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from modelplane_models.inference_cluster import Mode, Stack

from modelplane.cel.semver import Semver, SemverError
from modelplane.core.issues import Issue
from modelplane.core.vocabulary import Reason
from modelplane.stack.components import all_components

ROOT: Final = "spec.stack"


@dataclass(frozen=True)
class StackConfig:
    """The stack block, valid entries only; `issues` say what was left out."""

    mode: Mode = Mode.OBSERVE
    versions: Mapping[str, str] = field(default_factory=dict[str, str])

    def version(self, key: str, pinned: str) -> str:
        return self.versions.get(key, pinned)


def version_error(version: str) -> str | None:
    """Why `version` cannot pin a chart, or None."""
    try:
        Semver.parse(version.removeprefix("v"))
    except SemverError as error:
        return f"{version!r} is not a semantic version ({error})"
    return None


def read_stack(model: Stack | None) -> tuple[StackConfig, list[Issue]]:
    """The stack block and its problems (errors: the caller keeps what it composed)."""
    issues: list[Issue] = []
    # str(): an unvalidated schema default is the plain string, not the enum member.
    mode = Mode(str(model.mode or Mode.OBSERVE)) if model else Mode.OBSERVE
    known = all_components()
    versions: dict[str, str] = {}
    for key, version in sorted(((model.versions if model else None) or {}).items()):
        path = f"{ROOT}.versions[{key}]"
        if key not in known:
            issues.append(
                Issue(
                    path,
                    f"unknown component {key!r}; components are {', '.join(known)}",
                    Reason.INVALID_STACK,
                )
            )
            continue
        problem = version_error(version)
        if problem is not None:
            issues.append(Issue(path, problem, Reason.INVALID_STACK))
            continue
        versions[key] = version
    return StackConfig(mode, versions), issues
