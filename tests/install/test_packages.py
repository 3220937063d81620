"""Every place a function's installed name appears is held to the one derivation.

Crossplane names a dependency-installed package `xpkg.ToDNSLabel` of its
repository path (`modelplane_cli.packages`); a Composition whose
`functionRef.name` is not that name fails every composite it serves.
"""

import re
import tomllib
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from modelplane_cli.packages import (
    CONFIGURATION_REPOSITORY,
    FUNCTION_DIRECTORIES,
    FUNCTION_NAMES,
    function_name,
    function_repository,
    installed_name,
    repository_path,
    to_dns_label,
)
from modelplane_cli.render.runners import ENTRY_POINT_GROUP, FunctionRegistry
from modelplane_cli.schema.upstream import PINS_FILE, read_pins
from modelplane_dev.fuzz.examples import FUNCTIONS as FUZZED_FUNCTIONS

from . import upjet

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = {
    "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes": ">=v1.2.1 <v1.3.0",
    "xpkg.crossplane.io/crossplane-contrib/provider-helm": ">=v1.4.0 <v1.5.0",
}


def load(path: Path) -> dict[str, Any]:
    return cast(dict[str, Any], yaml.safe_load(path.read_text()))


def workspace_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


# crossplane-runtime v2.3.4 pkg/xpkg/name_test.go TestToDNSLabel, and the names the
# package manager gives Modelplane's own packages.
@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("-hi/my.name/is-", "hi-my-name-is"),
        ("a" * 64, "a" * 63),
        ("a" * 60 + "----", "a" * 60),
        ("Upper_Case.dots:colon", "pperase-dots-colon"),
        ("modelplane/compose-model-deployment", "modelplane-compose-model-deployment"),
        ("crossplane-contrib/provider-kubernetes", "crossplane-contrib-provider-kubernetes"),
        # Go looks at each rune's first byte only: é is two bytes, neither kept.
        ("café/x", "caf-x"),
    ],
)
def test_to_dns_label_is_crossplanes(text: str, label: str) -> None:
    assert to_dns_label(text) == label


@pytest.mark.parametrize(
    ("reference", "path"),
    [
        (
            "ghcr.io/modelplane/compose-model-deployment:v0.1.0",
            "modelplane/compose-model-deployment",
        ),
        ("xpkg.crossplane.io/crossplane-contrib/provider-helm", "crossplane-contrib/provider-helm"),
        ("localhost:5000/a/b@sha256:0123", "a/b"),
        ("registry:5000/fn", "fn"),
        ("hasheddan/xpkg-test", "hasheddan/xpkg-test"),
        ("nginx:1.27", "library/nginx"),
    ],
)
def test_repository_path_drops_registry_tag_and_digest(reference: str, path: str) -> None:
    assert repository_path(reference) == path


def test_every_function_directory_is_a_package() -> None:
    directories = sorted(
        p.name for p in (ROOT / "functions").iterdir() if (p / "pyproject.toml").is_file()
    )
    assert list(FUNCTION_DIRECTORIES) == directories
    assert tuple(f"modelplane-{d}" for d in directories) == FUNCTION_NAMES


@pytest.mark.parametrize("directory", FUNCTION_DIRECTORIES)
def test_function_package_metadata(directory: str) -> None:
    meta = load(ROOT / "functions" / directory / "package" / "crossplane.yaml")
    assert (meta["apiVersion"], meta["kind"]) == ("meta.pkg.crossplane.io/v1", "Function")
    assert meta["metadata"]["name"] == directory
    assert meta["spec"]["crossplane"] == {"version": ">=v2.3.0"}
    # Crossplane's fuzzy capability match: alphanumerics, case-insensitive.
    assert "composition" in {
        re.sub(r"[^a-z0-9]", "", c.lower()) for c in meta["spec"]["capabilities"]
    }
    assert set(meta["spec"]) <= {"crossplane", "dependsOn", "capabilities"}


def test_every_composition_calls_a_function_by_its_installed_name() -> None:
    called: dict[str, str] = {}
    for path in sorted((ROOT / "apis").glob("*/composition.yaml")):
        composition = load(path)
        for step in composition["spec"]["pipeline"]:
            called[path.parent.name] = step["functionRef"]["name"]
    # apis/<plural> is composed by functions/compose-<singular>, hyphenated.
    for api, name in called.items():
        kind = load(ROOT / "apis" / api / "definition.yaml")["spec"]["names"]["kind"]
        directory = "compose-" + re.sub(r"(?<!^)(?=[A-Z])", "-", kind).lower()
        assert name == function_name(directory), api
    assert sorted(called.values()) == sorted(FUNCTION_NAMES)


def dependencies() -> list[dict[str, Any]]:
    configuration = load(ROOT / "package" / "crossplane.yaml")
    assert (configuration["apiVersion"], configuration["kind"]) == (
        "meta.pkg.crossplane.io/v1",
        "Configuration",
    )
    assert configuration["spec"]["crossplane"] == {"version": ">=v2.3.0"}
    return configuration["spec"]["dependsOn"]


def test_the_configuration_depends_on_every_function_under_its_called_name() -> None:
    functions = [d for d in dependencies() if d["kind"] == "Function"]
    assert [d["package"] for d in functions] == [
        function_repository(d) for d in FUNCTION_DIRECTORIES
    ]
    assert tuple(installed_name(d["package"]) for d in functions) == FUNCTION_NAMES
    for dependency in functions:
        assert dependency["apiVersion"] == "pkg.crossplane.io/v1"
        # Exactly this release: Crossplane installs the newest tag a constraint allows
        # (v2.3 resolver findDependencyVersionToInstall), so an open range would pair
        # these XRDs with a later release's functions.
        assert dependency["version"] == f"=v{workspace_version()}"


def test_the_configuration_depends_on_provider_versions_that_exist() -> None:
    providers = {d["package"]: d["version"] for d in dependencies() if d["kind"] == "Provider"}
    assert {p: v for p, v in providers.items() if p in PROVIDERS} == PROVIDERS


def test_the_configuration_installs_every_upjet_group_at_its_validated_major() -> None:
    """Every upjet group whose CRDs the rendered objects are validated against
    (upstream-crds.yaml) is installed by a family package the Configuration depends
    on, from the validated release up to the next major; and nothing else upjet."""
    providers = {d["package"]: d["version"] for d in dependencies() if d["kind"] == "Provider"}
    installed = {n for p in providers for n in upjet.installed_with(p.rsplit("/", 1)[1])}
    expected: dict[str, str] = {}
    for pin in read_pins(ROOT / PINS_FILE):
        package = upjet.package_of(pin.file.split("_", 1)[0])
        if package is None:
            continue
        assert package in installed, pin.file
        if not package.startswith("provider-family-"):
            release = pin.version.rpartition("@")[2]  # "<repository>@v2.6.0"
            major = int(release.removeprefix("v").split(".")[0])
            expected[f"{upjet.REGISTRY}/{package}"] = f">={release} <v{major + 1}.0.0"
    assert {p: v for p, v in providers.items() if p not in PROVIDERS} == expected


def test_the_project_file_declares_the_same_dependencies() -> None:
    project = load(ROOT / "crossplane-project.yaml")
    assert project["spec"]["crossplane"] == {"version": ">=v2.3.0"}
    declared = [d["xpkg"] for d in project["spec"]["dependencies"]]
    assert declared == dependencies()
    # Embedded functions would be pushed to `<repository>_<function>` and installed
    # under a name no Composition calls.
    assert "functions" not in project["spec"]
    assert not (ROOT / project["spec"]["paths"]["functions"]).exists()
    # The CLI deletes its schemas directory whole (`dependency clean-cache`): one it
    # generates into, ignored by git, never the repository's own schemas/.
    generated = Path(project["spec"]["paths"]["schemas"])
    assert generated.parts[0] == ".crossplane"
    assert ".crossplane/" in (ROOT / ".gitignore").read_text().splitlines()
    assert installed_name(project["spec"]["repository"]) == installed_name(CONFIGURATION_REPOSITORY)


@pytest.mark.parametrize("directory", FUNCTION_DIRECTORIES)
def test_render_finds_each_function_by_its_installed_name(directory: str) -> None:
    pyproject = tomllib.loads((ROOT / "functions" / directory / "pyproject.toml").read_text())
    entry_points = pyproject["project"]["entry-points"][ENTRY_POINT_GROUP]
    assert list(entry_points) == [function_name(directory)]
    runner = FunctionRegistry().runner(function_name(directory))
    assert type(runner).__module__.startswith(directory.replace("-", "_"))


def test_the_fuzzers_call_every_function_by_its_installed_name() -> None:
    assert FUZZED_FUNCTIONS == FUNCTION_NAMES
