"""A user's fleet repository as `modelplane render` reads it: every mistake named, none lost."""

from __future__ import annotations

from pathlib import Path

from .cli import Fleet, modelplane


def fleet(tmp_path: Path) -> Fleet:
    return Fleet(tmp_path / "my-fleet", "catalog", "fleet")


def test_an_unknown_version_of_a_modelplane_kind_is_an_error_naming_the_document(
    tmp_path: Path,
) -> None:
    repo = fleet(tmp_path)
    repo.replace(
        "fleet/clusters.yaml", "apiVersion: modelplane.ai/v1alpha1", "apiVersion: modelplane.ai/v1"
    )

    run = modelplane("render", repo.root)

    assert run.code == 1
    assert run.errors()[0] == (
        f"error: {repo.path('fleet/clusters.yaml')}:4: modelplane.ai/v1 InferenceCluster "
        "\"prod-us-east\": InferenceCluster.modelplane.ai is not served at version 'v1' "
        "(served: v1alpha1)"
    )
    # The rest of the fleet still renders, without the cluster the document meant.
    assert "prod-us-east" not in run.out.split("PLACEMENTS")[0]


def test_a_misspelt_kind_is_an_error_naming_the_document(tmp_path: Path) -> None:
    repo = fleet(tmp_path)
    repo.replace("fleet/deployments.yaml", "kind: ModelDeployment", "kind: ModelDeploymnet")

    run = modelplane("render", repo.root)

    assert run.code == 1
    assert run.errors()[0] == (
        f"error: {repo.path('fleet/deployments.yaml')}:5: modelplane.ai/v1alpha1 "
        "ModelDeploymnet \"llama-8b\": no kind 'ModelDeploymnet' in modelplane.ai (its kinds: "
        "InferenceClass, InferenceCluster, InferenceGateway, ModelCache, ModelDeployment, "
        "ModelEndpoint, ModelReplica, ModelService)"
    )


def test_a_concatenated_file_that_lost_its_separator_is_rejected_not_half_read(
    tmp_path: Path,
) -> None:
    repo = fleet(tmp_path)
    classes = repo.text("catalog/classes.yaml")
    # Two classes glued together without `---`: YAML would keep only the second's keys.
    first, _, second = classes.partition("\n---\n")
    repo.path("catalog/classes.yaml").write_text(first + "\n" + second)
    line = (
        len(first.splitlines())
        + 1
        + second.splitlines().index("apiVersion: modelplane.ai/v1alpha1")
    )

    run = modelplane("render", repo.root)

    assert run.code == 1
    assert run.errors() == [
        f'error: {repo.path("catalog/classes.yaml")}:{line}: key "apiVersion" already set in map'
    ]


def test_hidden_directories_are_skipped_and_every_load_error_is_reported(tmp_path: Path) -> None:
    repo = fleet(tmp_path)
    (repo.root / ".git").mkdir()
    (repo.root / ".git" / "config.yaml").write_text("[core]\n")
    (repo.root / ".github" / "workflows").mkdir(parents=True)
    (repo.root / ".github" / "workflows" / "preview.yaml").write_text("on: [pull_request]\n")

    assert modelplane("render", repo.root).code == 0

    (repo.root / "broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
    (repo.root / "nameless.yaml").write_text("\n\napiVersion: v1\nkind: ConfigMap\n")

    run = modelplane("render", repo.root)

    assert run.code == 1
    assert run.out == ""
    # The parser's own words differ between libyaml and PyYAML; the place does not.
    assert [e.split(": while parsing")[0] for e in run.errors()] == [
        f"error: {repo.root / 'broken.yaml'}:4",
        f"error: {repo.root / 'nameless.yaml'}:3: metadata.name is required",
    ]
