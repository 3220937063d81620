"""`make` on a machine whose python3 pip is externally managed (PEP 668) and has no uv.

The machine is simulated, offline: `python3` is the base interpreter (outside any
virtual environment, with its own pip) run with a stdlib path that holds an
EXTERNALLY-MANAGED marker, exactly what pip checks; PATH holds only the tools the
Makefile needs, HOME is empty, and pip may only read a local directory holding a
stand-in uv wheel. A real run against PyPI is the same, with the real wheel.

Needs: a python3 with pip outside any virtual environment (the interpreter the
test environment was made from), and make and bash on the machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UV_VERSION = "0.0.1"
TOOLS_ON_PATH = ("make", "bash", "mktemp", "mkdir", "rm", "cat")


def _base_python() -> Path:
    for name in ("python3", "python"):
        candidate = Path(sys.base_prefix) / "bin" / name
        if candidate.is_file():
            return candidate
    pytest.skip(f"no base interpreter under {sys.base_prefix}")


def _wheel(directory: Path) -> None:
    """A uv wheel whose binary prints a version: what `pip download` fetches."""
    directory.mkdir()
    dist = f"uv-{UV_VERSION}"
    with zipfile.ZipFile(directory / f"{dist}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{dist}.data/scripts/uv", f"#!/bin/sh\necho 'uv {UV_VERSION} (stand-in)'\n")
        wheel.writestr(
            f"{dist}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: uv\nVersion: {UV_VERSION}\n",
        )
        wheel.writestr(
            f"{dist}.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{dist}.dist-info/RECORD", "")


def _externally_managed_python(root: Path) -> Path:
    """`python3` whose stdlib path carries the EXTERNALLY-MANAGED marker."""
    base = _base_python()
    check = subprocess.run([base, "-m", "pip", "--version"], capture_output=True, check=False)
    if check.returncode != 0:
        pytest.skip(f"{base} has no pip")
    stdlib = root / "stdlib"
    stdlib.mkdir(parents=True)
    (stdlib / "EXTERNALLY-MANAGED").write_text(
        "[externally-managed]\nError=This Python is managed by the system package manager.\n"
    )
    site = root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, sysconfig\n"
        "_get_path = sysconfig.get_path\n"
        "def get_path(name, *args, **kwargs):\n"
        "    if name == 'stdlib':\n"
        "        return os.environ['SIMULATED_STDLIB']\n"
        "    return _get_path(name, *args, **kwargs)\n"
        "sysconfig.get_path = get_path\n"
    )
    shim = root / "bin" / "python3"
    shim.parent.mkdir()
    shim.write_text(
        f'#!/bin/sh\nSIMULATED_STDLIB="{stdlib}" PYTHONPATH="{site}" exec "{base}" "$@"\n'
    )
    shim.chmod(0o755)
    for tool in TOOLS_ON_PATH:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (shim.parent / tool).symlink_to(found)
    return shim.parent


def test_make_installs_a_private_uv_where_pip_is_externally_managed(tmp_path: Path) -> None:
    path = _externally_managed_python(tmp_path / "machine")
    wheels = tmp_path / "wheels"
    _wheel(wheels)
    home = tmp_path / "home"
    home.mkdir()
    tools = tmp_path / "tools"
    env = {
        "PATH": str(path),
        "HOME": str(home),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_CONFIG_FILE": os.devnull,
    }

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=120
        )

    # The simulated machine refuses what the Makefile used to do.
    refused = run("python3", "-m", "pip", "install", "--user", "uv")
    assert refused.returncode != 0
    assert "externally-managed-environment" in refused.stderr

    made = run("make", "uv", f"TOOLS={tools}", f"UV_VERSION={UV_VERSION}")

    assert made.returncode == 0, made.stderr
    assert f"installed uv {UV_VERSION} (stand-in) into {tools}/bin" in made.stdout
    version = run(str(tools / "bin" / "uv"), "--version")
    assert version.stdout == f"uv {UV_VERSION} (stand-in)\n"
    assert not (home / ".local").exists()
    # Every later target runs the private uv.
    planned = run("make", "-n", "sync", f"TOOLS={tools}", f"UV_VERSION={UV_VERSION}")
    assert f"{tools}/bin/uv sync --frozen" in planned.stdout
    # Once there, it is not installed again.
    again = run("make", "uv", f"TOOLS={tools}", f"UV_VERSION={UV_VERSION}")
    assert (again.returncode, again.stdout) == (0, "")
