"""install/ and the install guide: every manifest valid, every file the guide names real.

Custom resources are checked against their upstream CRDs (Crossplane's package
CRDs are pinned in upstream-crds.yaml), built-in kinds strictly against the
Kubernetes schemas, Modelplane's kinds against their XRDs.
"""

import re
import tomllib
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from modelplane_cli.packages import CONFIGURATION_REPOSITORY, installed_name
from modelplane_cli.schema import ManifestValidator
from modelplane_cli.schema.registry import SchemaRegistry

pytestmark = pytest.mark.needs_crds
ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "install"
GUIDE = ROOT / "docs" / "guides" / "installing.md"
# A path the guide names: under install/ or examples/, a file or a directory.
NAMED = re.compile(r"(?<![\w/.-])((?:install|examples)/[\w./-]*[\w/])")
INSTALL_FILES = sorted(INSTALL.rglob("*.yaml"))
# Crossplane's package kinds, for when the upstream CRDs (`make crds`) are absent.
PACKAGE_KINDS = Path(__file__).with_name("package_kinds.yaml")


@pytest.fixture(scope="module")
def install_validator(manifest_validator: ManifestValidator) -> ManifestValidator:
    """The suite's validator, falling back to `package_kinds.yaml` for Crossplane's
    package kinds only where the upstream CRDs lack them (an upstream CRD wins)."""
    registry = SchemaRegistry.from_files([PACKAGE_KINDS])
    registry.merge(manifest_validator.registry)
    return ManifestValidator(registry, manifest_validator.kubernetes_version)


def documents(path: Path) -> list[dict[str, Any]]:
    return [cast(dict[str, Any], d) for d in yaml.safe_load_all(path.read_text()) if d]


def named_in_guide() -> list[str]:
    return sorted(set(NAMED.findall(GUIDE.read_text())))


def applied_files() -> list[Path]:
    """The files the guide applies: `kubectl apply -f <file or directory>`."""
    applied: list[Path] = []
    for target in re.findall(r"kubectl apply -f (\S+)", GUIDE.read_text()):
        path = ROOT / target
        applied.extend(sorted(path.glob("*.yaml")) if path.is_dir() else [path])
    return applied


@pytest.mark.parametrize("path", INSTALL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_install_manifest_is_valid(path: Path, install_validator: ManifestValidator) -> None:
    found = documents(path)
    assert found
    for document in found:
        try:
            problems = install_validator.validate(document)
        except LookupError as exc:
            pytest.fail(f"{path}: {exc}: the upstream CRDs lack it (`make crds`)")
        assert problems == [], (path, document["kind"])


def test_the_guide_names_only_files_that_exist() -> None:
    named = named_in_guide()
    assert named
    missing = [n for n in named if not (ROOT / n).exists()]
    assert missing == []


def test_the_guide_applies_every_install_file_and_shows_no_inline_manifest() -> None:
    text = GUIDE.read_text()
    assert "```yaml" not in text
    applied = applied_files()
    assert set(INSTALL_FILES) <= set(applied)
    assert all(p.is_file() for p in applied)


def test_every_example_the_guide_applies_is_valid(manifest_validator: ManifestValidator) -> None:
    examples = [p for p in applied_files() if p.is_relative_to(ROOT / "examples")]
    assert examples
    for path in examples:
        for document in documents(path):
            assert manifest_validator.validate(document) == [], (path, document["kind"])


def by_kind(path: Path) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in documents(path)}


def test_provider_kubernetes_runs_with_watches_however_it_was_installed() -> None:
    manifests = by_kind(INSTALL / "providers" / "provider-kubernetes.yaml")
    runtime, image = manifests["DeploymentRuntimeConfig"], manifests["ImageConfig"]
    (container,) = runtime["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"]
    # crossplane v2.3 internal/controller/pkg/runtime/runtime.go ContainerName.
    assert container["name"] == "package-runtime"
    assert "--enable-watches" in container["args"]
    # The render's provider reports a Secret's data redacted, as this flag makes it.
    assert "--sanitize-secrets" in container["args"]
    assert image["spec"]["runtime"]["configRef"]["name"] == runtime["metadata"]["name"]
    (match,) = image["spec"]["matchImages"]
    configuration = documents(ROOT / "package" / "crossplane.yaml")[0]
    kubernetes = [
        d["package"]
        for d in configuration["spec"]["dependsOn"]
        if d["package"].endswith("/provider-kubernetes")
    ]
    assert [match["prefix"]] == kubernetes


def test_the_configuration_installed_is_the_one_built() -> None:
    (configuration,) = documents(INSTALL / "configuration.yaml")
    repository, _, tag = configuration["spec"]["package"].rpartition(":")
    assert repository == CONFIGURATION_REPOSITORY
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert tag == f"v{version}"


def test_the_guide_lists_the_names_crossplane_gives_the_packages() -> None:
    text = GUIDE.read_text()
    for dependency in documents(ROOT / "package" / "crossplane.yaml")[0]["spec"]["dependsOn"]:
        name = installed_name(dependency["package"])
        if dependency["kind"] == "Provider":
            assert f"`{name}`" in text
    assert "`modelplane-compose-model-deployment`" in text


@pytest.mark.parametrize(
    ("kind", "field"),
    [
        ("Configuration", "packages"),
        ("DeploymentRuntimeConfig", "deploymentTemplat"),
        ("ImageConfig", "matchImage"),
    ],
)
def test_a_misspelt_package_field_is_refused(
    kind: str, field: str, install_validator: ManifestValidator
) -> None:
    [document] = [d for p in INSTALL_FILES for d in documents(p) if d["kind"] == kind]
    document["spec"][field] = document["spec"].get(field, "x")
    assert install_validator.validate(document) != []
