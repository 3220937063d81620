"""Function images ship only what functions run.

Each function's wheel, and the runtime wheel every function depends on, are
built here and read: the runtime holds the pure core and the Crossplane glue,
never the render engine, admission, the CLI, the bench or their dependencies.
"""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest

from modelplane_cli.main import main
from modelplane_cli.schema.upstream import missing_crds_message, reference_crd_directory

ROOT = Path(__file__).resolve().parents[1]
RUNTIME_PACKAGES = {
    "caching",
    "cel",
    "conventions",
    "core",
    "fleet",
    "provisioning",
    "scheduling",
    "stack",
    "traffic",
    "workloads",
    "xfn",
}


def _workspace_members() -> tuple[str, ...]:
    """Every distribution of the uv workspace: the root and its members."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = [root["project"]["name"]]
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for member in sorted(ROOT.glob(pattern)):
            project = tomllib.loads((member / "pyproject.toml").read_text())
            names.append(project["project"]["name"])
    return tuple(names)


WORKSPACE_MEMBERS = _workspace_members()
FUNCTIONS = sorted(
    p.name for p in (ROOT / "functions").iterdir() if (p / "pyproject.toml").is_file()
)
# What only tooling and tests use; none of it may reach a function image.
TOOLING_DISTRIBUTIONS = {
    "modelplane-cli",
    "modelplane-dev",
    "scipy",
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


# What a fleet repository's CLI never carries: the developer tooling lives in the
# dev-only workspace member modelplane-dev (dev/).
DEV_MODULES = re.compile(r"(^|/)(bench\w*|fuzz|testing|package_command)(/|\.py$)")


def test_cli_wheel_ships_the_apis_it_renders_and_no_dev_tooling(tmp_path: Path) -> None:
    wheel = build("modelplane-cli", tmp_path)
    modules = [n for n in wheel.namelist() if n.endswith(".py")]
    assert "modelplane_cli/render_command.py" in modules
    assert [n for n in modules if DEV_MODULES.search(n)] == []
    assert {n.split("/")[0] for n in wheel.namelist() if "dist-info" not in n} == {"modelplane_cli"}
    assert not requirements(wheel) & {"modelplane-dev", "scipy", "hypothesis", "pytest"}
    shipped = sorted(
        n for n in wheel.namelist() if n.startswith("modelplane_cli/apis/") and n.endswith(".yaml")
    )
    source = sorted(
        f"modelplane_cli/apis/{p.relative_to(ROOT / 'apis')}"
        for p in (ROOT / "apis").rglob("*.yaml")
    )
    assert shipped == source
    # The stand-in schemas `modelplane render` validates against where no upstream CRD is.
    assert "modelplane_cli/schema/standins/gateway.networking.k8s.io_backendtlspolicies.yaml" in (
        wheel.namelist()
    )
    for name in shipped:
        assert (
            wheel.read(name)
            == (ROOT / "apis" / name.removeprefix("modelplane_cli/apis/")).read_bytes()
        )


@pytest.mark.needs_crds
def test_the_cli_installed_on_its_own_renders_a_fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a GitOps repository's CI does: install modelplane-cli with its runtime
    dependencies only (no dev group), as built packages rather than this checkout's
    sources, and render a fleet from the repository's own directory. uv installs it
    from the lock, offline: every wheel is in the cache `make sync` filled."""
    venv = tmp_path / "ci-venv"
    subprocess.run(
        [
            uv(),
            "sync",
            "--frozen",
            "--no-dev",
            "--package",
            "modelplane-cli",
            "--no-editable",
            "--offline",
            "--quiet",
            # uv caches a workspace member's built wheel by its pyproject.toml alone,
            # so rebuild every member from the sources as they are now.
            *(f"--reinstall-package={member}" for member in WORKSPACE_MEMBERS),
        ],
        cwd=ROOT,
        check=True,
        env={**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)},
    )
    # One interpreter checks what the installed CLI imports (each Python start-up
    # costs more than the checks): every module of it imports with only its
    # declared dependencies, its APIs are the ones it ships, and no tooling came along.
    probe = (
        "import importlib, importlib.util, json, pkgutil, modelplane_cli\n"
        "for m in pkgutil.walk_packages(modelplane_cli.__path__, 'modelplane_cli.'):\n"
        "    importlib.import_module(m.name)\n"
        "import modelplane_cli.render.apis as a\n"
        "names = ('pytest', 'modelplane_dev', 'scipy')\n"
        "found = [n for n in names if importlib.util.find_spec(n) is not None]\n"
        "print(json.dumps({'apis': str(a.default_apis_dir()), 'importable': found}))\n"
    )
    site = subprocess.run(
        [venv / "bin" / "python", "-c", probe], capture_output=True, text=True, check=True
    )
    checked = json.loads(site.stdout)
    assert "site-packages/modelplane_cli/apis" in checked["apis"]
    assert checked["importable"] == []
    fleet = tmp_path / "fleet-repo"
    shutil.copytree(ROOT / "examples", fleet)
    installed = venv / "bin" / "modelplane"

    version = subprocess.run([installed, "--version"], capture_output=True, text=True, check=True)
    # Without modelplane-dev, `bench` is not a command (argparse's usage error).
    bench = subprocess.run(
        [installed, "bench", "--help"], check=False, capture_output=True, text=True
    )
    assert bench.returncode == 2
    assert "invalid choice: 'bench'" in bench.stderr
    # Both commands validate against the same CRDs: the installed CLI has no checkout
    # to find them beside, so it is told where they are.
    reference = reference_crd_directory()
    assert reference is not None, missing_crds_message()
    env = {**os.environ, "MODELPLANE_CRDS": str(reference)}
    argv = ["render", "catalog", "fleet", "-o", "yaml"]
    rendered = subprocess.run(
        [installed, *argv], cwd=fleet, capture_output=True, text=True, check=False, env=env
    )
    # What to compare with: the checkout's CLI, the same command line and environment
    # run through its entry point in this process (only the installed one's process is
    # under test; another interpreter would only pay its start-up again).
    monkeypatch.setenv("MODELPLANE_CRDS", str(reference))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(fleet), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    in_checkout = subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())

    assert version.stdout.startswith("modelplane ")
    assert rendered.stdout == in_checkout.stdout
    assert "kind: ModelReplica" in rendered.stdout
    assert (rendered.returncode, rendered.stderr) == (in_checkout.returncode, in_checkout.stderr)
