"""`make package`: what it builds, where it would push, and what it says when it cannot."""

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from modelplane_cli.packages import FUNCTION_DIRECTORIES, FUNCTION_NAMES, installed_name
from modelplane_dev import package_command
from modelplane_dev.package_command import (
    ARCHITECTURES,
    missing_tools,
    plan,
    push_commands,
    stage_configuration,
)

ROOT = Path(__file__).resolve().parents[2]


def which_only(*present: str) -> Callable[[str], str | None]:
    return lambda tool: f"/usr/bin/{tool}" if tool in present else None


def works_except(*failing: str) -> Callable[[Sequence[str]], bool]:
    def works(argv: Sequence[str]) -> bool:
        return not any(" ".join(argv[1:]).startswith(f) for f in failing)

    return works


def test_missing_tools_are_named() -> None:
    assert missing_tools(which_only(), works_except()) == [
        package_command._MISSING_HELP["docker"],
        package_command._MISSING_HELP["crossplane"],
    ]
    # docker without its buildx plugin is not enough.
    assert missing_tools(which_only("docker", "crossplane"), works_except("buildx")) == [
        package_command._MISSING_HELP["docker"]
    ]
    assert missing_tools(which_only("docker", "crossplane"), works_except()) == []


def test_without_the_tools_nothing_is_built_and_the_exit_is_non_zero(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(package_command, "missing_tools", lambda: ["the crossplane CLI"])
    assert package_command.main(["--out", str(tmp_path / "dist")]) == 1
    assert "nothing built; it needs the crossplane CLI" in capsys.readouterr().err
    assert not (tmp_path / "dist").exists()


def test_each_function_is_built_for_each_architecture(tmp_path: Path) -> None:
    steps = [step.argv for step in plan(ROOT, tmp_path)]
    assert len(steps) == len(FUNCTION_DIRECTORIES) * len(ARCHITECTURES) * 2 + 1
    for directory in FUNCTION_DIRECTORIES:
        for arch in ARCHITECTURES:
            image = f"type=docker,dest={tmp_path / f'{directory}-{arch}.tar'}"
            build = next(s for s in steps if s[:3] == ("docker", "buildx", "build") and image in s)
            assert f"FUNCTION={directory}" in build
            assert f"linux/{arch}" in build
            package = next(s for s in steps if str(tmp_path / f"{directory}-{arch}.xpkg") in s)
            root = Path(package[package.index("--package-root") + 1])
            assert (root / "crossplane.yaml").is_file()
            assert not (root / "examples").exists()
            assert package[package.index("--embed-runtime-image-tarball") + 1] == str(
                tmp_path / f"{directory}-{arch}.tar"
            )
    assert "ARG FUNCTION" in (ROOT / "Dockerfile").read_text()


def test_the_configuration_package_root_holds_its_metadata_and_the_apis(tmp_path: Path) -> None:
    staged = stage_configuration(ROOT, tmp_path)
    built = {p.relative_to(staged) for p in staged.rglob("*") if p.is_file()}
    apis = {Path("apis") / p.relative_to(ROOT / "apis") for p in (ROOT / "apis").glob("*/*.yaml")}
    assert built == {Path("crossplane.yaml"), *apis}
    (last,) = plan(ROOT, tmp_path)[-1:]
    assert str(staged) in last.argv


def test_pushes_go_to_the_repositories_whose_names_the_compositions_call(tmp_path: Path) -> None:
    commands = push_commands(ROOT, tmp_path)
    targets = [command.rsplit(" ", 1)[1] for command in commands]
    names = tuple(installed_name(target.rpartition(":")[0]) for target in targets[:-1])
    assert names == FUNCTION_NAMES
    version = package_command.version(ROOT)
    assert all(target.endswith(f":{version}") for target in targets)
    for directory, command in zip(FUNCTION_DIRECTORIES, commands, strict=False):
        for arch in ARCHITECTURES:
            assert str(tmp_path / f"{directory}-{arch}.xpkg") in command
