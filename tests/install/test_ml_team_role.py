"""install/rbac/ml-team.yaml: an ML team writes exactly the kinds it owns and reads what
Modelplane composes for it, never a status and never a composed kind; it scales what it
owns through the scale subresource, as `kubectl scale` does, and reads the events raised
on its objects."""

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "install" / "rbac" / "ml-team.yaml"
# target-api.md "Who owns what": what ML teams write; Modelplane composes the rest.
TEAM_WRITES = frozenset({"ModelDeployment", "ModelService", "ModelCache"})
WRITE = frozenset({"create", "update", "patch", "delete"})


# `kubectl scale` reads and then patches (or updates) the scale subresource.
SCALE = frozenset({"get", "update", "patch"})


def _definitions() -> list[dict[str, Any]]:
    return [
        yaml.safe_load(path.read_text(encoding="utf-8"))["spec"]
        for path in sorted((ROOT / "apis").glob("*/definition.yaml"))
    ]


def _namespaced_kinds() -> dict[str, str]:
    """Every namespaced composite Modelplane defines: kind -> plural."""
    return {
        spec["names"]["kind"]: spec["names"]["plural"]
        for spec in _definitions()
        if spec.get("scope", "Namespaced") == "Namespaced"
    }


def _scalable_team_kinds() -> set[str]:
    """The plurals of the kinds a team writes whose XRD has a scale subresource."""
    return {
        spec["names"]["plural"]
        for spec in _definitions()
        if spec["names"]["kind"] in TEAM_WRITES
        and any("scale" in v.get("subresources", {}) for v in spec["versions"])
    }


def _verbs(role: dict[str, Any], resource: str) -> set[str]:
    return {
        verb
        for rule in role["rules"]
        if "modelplane.ai" in rule["apiGroups"] and resource in rule["resources"]
        for verb in rule["verbs"]
    }


def test_a_team_writes_what_it_owns_and_only_reads_what_modelplane_composes() -> None:
    role = yaml.safe_load(ROLE.read_text(encoding="utf-8"))
    kinds = _namespaced_kinds()
    assert set(kinds) > TEAM_WRITES
    for kind, plural in kinds.items():
        verbs = _verbs(role, plural)
        assert {"get", "list", "watch"} <= verbs, kind
        assert (verbs >= WRITE) is (kind in TEAM_WRITES), kind
        assert not verbs & WRITE or kind in TEAM_WRITES, kind
    granted = {r for rule in role["rules"] for r in rule["resources"]}
    scales = {f"{plural}/scale" for plural in _scalable_team_kinds()}
    assert scales == {"modeldeployments/scale"}
    # No status, no wildcard: the only subresources are the scale of what a team owns.
    assert "*" not in granted and {r for r in granted if "/" in r} == scales
    for scale in scales:
        assert _verbs(role, scale) == SCALE, scale
    assert all("*" not in rule["verbs"] and "*" not in rule["apiGroups"] for rule in role["rules"])


def test_a_team_reads_the_events_on_its_objects_and_writes_none() -> None:
    """`kubectl describe md/...` lists the Warning events (Preempted, a refused field)
    only for a role that may list events; a team never writes one."""
    role = yaml.safe_load(ROLE.read_text(encoding="utf-8"))
    for group in ("", "events.k8s.io"):
        verbs = {
            verb
            for rule in role["rules"]
            if group in rule["apiGroups"] and "events" in rule["resources"]
            for verb in rule["verbs"]
        }
        assert verbs == {"get", "list", "watch"}, group
