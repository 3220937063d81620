"""`make package`: every function's image and Function package, and the Configuration.

For each function under functions/ and each architecture, `docker buildx` builds
the image (the repository's Dockerfile) into a tarball, and `crossplane xpkg
build --embed-runtime-image-tarball` wraps it with the function's
`package/crossplane.yaml` into `dist/<function>-<arch>.xpkg`. The Configuration
package is built from `package/crossplane.yaml` and `apis/`, staged together
because a package root holds its metadata and its resources. Pushing the
per-architecture packages of one function to its repository
(`modelplane_cli.packages.function_repository`) makes one multi-architecture
package; the commands are printed at the end.

Without `docker buildx` or the `crossplane` CLI nothing is built: the command
names what is missing and exits non-zero.
"""

import argparse
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from modelplane_cli.packages import (
    CONFIGURATION_REPOSITORY,
    FUNCTION_DIRECTORIES,
    function_repository,
)

ARCHITECTURES: Final = ("amd64", "arm64")
_MISSING_HELP: Final = {
    "docker": "docker with the buildx plugin (https://docs.docker.com/build/)",
    "crossplane": "the crossplane CLI (https://docs.crossplane.io/latest/cli/)",
}


@dataclass(frozen=True)
class Step:
    """One command of the build, run in the repository root."""

    argv: tuple[str, ...]
    describes: str


def missing_tools(
    which: Callable[[str], str | None] = shutil.which,
    works: Callable[[Sequence[str]], bool] | None = None,
) -> list[str]:
    """What `make package` needs and cannot find, in words for the user."""
    run = works or _works
    missing: list[str] = []
    docker = which("docker")
    if docker is None or not run([docker, "buildx", "version"]):
        missing.append(_MISSING_HELP["docker"])
    crossplane = which("crossplane")
    if crossplane is None or not run([crossplane, "xpkg", "build", "--help"]):
        missing.append(_MISSING_HELP["crossplane"])
    return missing


def _works(argv: Sequence[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def version(root: Path) -> str:
    """The release tag: the workspace's version, `v`-prefixed as Crossplane expects."""
    return "v" + tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


def plan(root: Path, out: Path) -> list[Step]:
    """Every command, in order: each function's images and packages, then the
    Configuration's staging and package."""
    steps: list[Step] = []
    for directory in FUNCTION_DIRECTORIES:
        for arch in ARCHITECTURES:
            image = out / f"{directory}-{arch}.tar"
            steps.append(
                Step(
                    (
                        "docker",
                        "buildx",
                        "build",
                        "--platform",
                        f"linux/{arch}",
                        "--build-arg",
                        f"FUNCTION={directory}",
                        "--output",
                        f"type=docker,dest={image}",
                        str(root),
                    ),
                    f"image {directory} linux/{arch}",
                )
            )
            steps.append(
                Step(
                    (
                        "crossplane",
                        "xpkg",
                        "build",
                        "--package-root",
                        str(root / "functions" / directory / "package"),
                        # No examples: a missing examples root is allowed, and the
                        # default (./examples) would ship the fleet's.
                        "--examples-root",
                        str(root / "functions" / directory / "package" / "examples"),
                        "--embed-runtime-image-tarball",
                        str(image),
                        "--package-file",
                        str(out / f"{directory}-{arch}.xpkg"),
                    ),
                    f"package {directory} linux/{arch}",
                )
            )
    staged = out / "configuration"
    steps.append(
        Step(
            (
                "crossplane",
                "xpkg",
                "build",
                "--package-root",
                str(staged),
                "--examples-root",
                str(root / "examples"),
                "--package-file",
                str(out / "configuration.xpkg"),
            ),
            "package the Configuration",
        )
    )
    return steps


def stage_configuration(root: Path, out: Path) -> Path:
    """The Configuration's package root: its crossplane.yaml beside the XRDs and
    Compositions of apis/."""
    staged = out / "configuration"
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    shutil.copyfile(root / "package" / "crossplane.yaml", staged / "crossplane.yaml")
    for source in sorted((root / "apis").glob("*/*.yaml")):
        target = staged / "apis" / source.relative_to(root / "apis")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return staged


def push_commands(root: Path, out: Path) -> list[str]:
    """How to publish what was built, one multi-architecture package per repository."""
    tag = version(root)
    commands = [
        "crossplane xpkg push --package-files "
        + ",".join(str(out / f"{d}-{arch}.xpkg") for arch in ARCHITECTURES)
        + f" {function_repository(d)}:{tag}"
        for d in FUNCTION_DIRECTORIES
    ]
    commands.append(
        f"crossplane xpkg push --package-files {out / 'configuration.xpkg'} "
        f"{CONFIGURATION_REPOSITORY}:{tag}"
    )
    return commands


def main(argv: Sequence[str] | None = None) -> int:
    root = Path(__file__).resolve().parents[3]
    parser = argparse.ArgumentParser(prog="make package", description=__doc__)
    parser.add_argument("--out", type=Path, default=root / "dist")
    parser.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    steps = plan(root, out)
    if args.dry_run:
        for step in steps:
            print(" ".join(step.argv))
        return 0
    missing = missing_tools()
    if missing:
        print("make package: nothing built; it needs " + " and ".join(missing), file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    stage_configuration(root, out)
    for step in steps:
        print(f"== {step.describes}", flush=True)
        if subprocess.run(step.argv, cwd=root, check=False).returncode != 0:
            print(f"make package: {step.describes} failed", file=sys.stderr)
            return 1
    print("Built into " + str(out) + ". To publish:")
    for command in push_commands(root, out):
        print("  " + command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
