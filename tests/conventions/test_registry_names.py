"""Every per-scheduler and per-backend fact lives in its registry.

No module outside the scheduler registry (`conventions/schedulers`) and the backend
registry (the XRD's generated `inference_cluster.BackendType`, rendered by
`workloads/`) names a scheduler or a backend as a string literal; adding one touches its module plus its docs.
"""

import ast
from pathlib import Path

import pytest
from modelplane_models.inference_cluster import BackendType

from modelplane.conventions.schedulers import KAI, SCHEDULERS, Default

ROOT = Path(__file__).resolve().parents[2]
NAMES = {*SCHEDULERS, *(b.value for b in BackendType), "coscheduling"}
# The scheduler registry. The backends' names are written only in the XRD and its
# generated models (`schemas/python`), which the scan does not read.
REGISTRIES = ("src/modelplane/conventions/schedulers/",)
# Literals that spell a scheduler's name but mean something else, by module.
OTHER_MEANINGS = {
    ("src/modelplane/core/pod_security.py", "Default"): "Kubernetes' default procMount type",
}


def _sources() -> list[Path]:
    roots = [ROOT / "src", *sorted((ROOT / "functions").glob("*/src"))]
    return sorted(p for root in roots for p in root.rglob("*.py"))


def _literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and node.value in NAMES
    ]


def test_no_module_outside_the_registries_names_a_scheduler_or_backend() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in _sources()
        if not str(path.relative_to(ROOT)).startswith(REGISTRIES)
        for line, value in _literals(path)
        if (str(path.relative_to(ROOT)), value) not in OTHER_MEANINGS
    ]
    assert found == []


def test_the_scan_sees_the_registries() -> None:
    """The scan would catch a name: the registries themselves hold them."""
    kai = ROOT / "src/modelplane/conventions/schedulers/kai.py"
    assert "KAI" in {value for _, value in _literals(kai)}


@pytest.mark.parametrize(
    ("scheduler", "expected"),
    [
        (KAI(preemptible_priorities=frozenset({"batch"})), frozenset({"batch"})),
        (Default(), frozenset[str]()),
    ],
)
def test_over_quota_priorities_are_a_scheduler_fact(
    scheduler: KAI | Default, expected: frozenset[str]
) -> None:
    assert scheduler.over_quota_priorities() == expected
