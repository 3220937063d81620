"""`make render ARGS="... -o yaml" > world.yaml` writes the rendered world and nothing else."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from modelplane_cli import yamlio

ROOT = Path(__file__).resolve().parents[1]


def test_make_render_writes_only_the_output(tmp_path: Path) -> None:
    make = shutil.which("make")
    uv = os.environ.get("UV") or shutil.which("uv")
    if make is None or uv is None:
        pytest.skip("needs make and uv (make pytest passes UV)")
    world = tmp_path / "world.yaml"
    args = "examples/catalog examples/fleet -o yaml --in-process"

    with world.open("w") as out:
        done = subprocess.run(
            [make, "--no-print-directory", "render", f"UV={uv}", f"ARGS={args}"],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
            check=False,
        )

    assert done.returncode == 0, done.stderr
    text = world.read_text()
    assert text.startswith("---\napiVersion: "), text[:200]
    objects = [o for o in yamlio.load_all(text) if o is not None]
    assert {o["kind"] for o in objects} >= {"InferenceCluster", "ModelDeployment"}
