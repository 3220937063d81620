"""Function images ship only what functions run.

Each function's wheel, and the runtime wheel every function depends on, are
built here and read: the runtime holds the pure core and the Crossplane glue,
never the render engine, admission, the CLI, the bench or their dependencies.
"""

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNTIME_PACKAGES = {"cel", "conventions", "core", "fleet", "scheduling", "workloads", "xfn"}
FUNCTIONS = sorted(
    p.name for p in (ROOT / "functions").iterdir() if (p / "pyproject.toml").is_file()
)
# What only tooling and tests use; none of it may reach a function image.
TOOLING_DISTRIBUTIONS = {
    "modelplane-cli",
    "pyyaml",
    "kubernetes-validate",
    "hypothesis",
    "pytest",
    "import-linter",
    "datamodel-code-generator",
}


def uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        pytest.fail("uv is needed to build wheels; run the suite through `make test`")
    return found


def build(package: str, out: Path) -> zipfile.ZipFile:
    subprocess.run(
        [uv(), "build", "--wheel", "--package", package, "--out-dir", str(out), "--quiet"],
        cwd=ROOT,
        check=True,
    )
    (wheel,) = out.glob(f"{package.replace('-', '_')}-*.whl")
    return zipfile.ZipFile(wheel)


def requirements(wheel: zipfile.ZipFile) -> set[str]:
    """The distribution names a wheel's METADATA requires, lower-cased."""
    metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    return {
        re.split(r"[\s;=<>!~\[]", line.removeprefix("Requires-Dist: "), maxsplit=1)[0].lower()
        for line in wheel.read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist: ")
    }


def test_runtime_wheel_holds_only_the_core_and_the_glue(tmp_path: Path) -> None:
    wheel = build("modelplane", tmp_path)
    subpackages = {
        name.split("/")[1]
        for name in wheel.namelist()
        if name.startswith("modelplane/") and name.count("/") >= 2
    }
    assert subpackages == RUNTIME_PACKAGES
    assert not requirements(wheel) & TOOLING_DISTRIBUTIONS


@pytest.mark.parametrize("function", FUNCTIONS)
def test_function_wheel_depends_only_on_the_runtime(tmp_path: Path, function: str) -> None:
    wheel = build(function, tmp_path)
    assert requirements(wheel) == {"modelplane", "modelplane-models"}
    top_level = {name.split("/")[0] for name in wheel.namelist() if "dist-info" not in name}
    assert top_level == {function.replace("-", "_")}
