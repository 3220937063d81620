"""One mistake is reported once, where it was made, with its field path and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli import Fleet, modelplane


def _limit(repo: Fleet, deployment: str, image: str, memory: str) -> None:
    """Give the first container after `deployment`'s `image` line a memory limit."""
    text = repo.text("fleet/deployments.yaml")
    start = text.index(f"name: {deployment}\n")
    at = text.index(f"image: {image}", start)
    indent = text[text.rindex("\n", 0, at) + 1 : at]
    end = text.index("\n", at)
    limit = f"\n{indent}resources:\n{indent}  limits: {{memory: {memory}}}"
    repo.path("fleet/deployments.yaml").write_text(text[:end] + limit + text[end:])


def test_a_bad_quantity_is_one_line_at_the_deployment(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "my-fleet", "catalog", "fleet")
    _limit(repo, "llama-8b", "vllm/vllm-openai", "64GBB")

    run = modelplane("render", repo.root)

    assert run.code == 1
    (line,) = run.errors()
    assert line.startswith(
        f"error: {repo.path('fleet/deployments.yaml')}:5: ModelDeployment ml-team-prod/llama-8b: "
        'spec.workers.template.spec.containers[0].resources.limits.memory: Invalid value: "64GBB": '
    )
    assert line.endswith(
        "(the API server of prod-eu-west would refuse 2 workloads "
        "(LLMInferenceService llama-8b-62ef462dbb, ...))"
    )


def test_a_quantity_a_built_in_kind_cannot_decode_names_field_and_value(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "my-fleet", "catalog", "fleet")
    _limit(repo, "deepseek-r1", "vllm/vllm-openai", "12XB")

    run = modelplane("render", repo.root)

    assert run.code == 1
    (line,) = run.errors()
    assert (
        "ModelDeployment ml-team-prod/deepseek-r1: "
        'spec.decode.workers.template.spec.containers[0].resources.limits.memory: "12XB": '
        "quantities must match the regular expression"
    ) in line
    assert line.endswith(
        "(the API server of prod-us-east would refuse Deployment deepseek-r1-94a619b8bc-decode)"
    )


def test_an_admission_error_has_no_line_of_noise(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "my-fleet", "catalog", "fleet")
    repo.replace("fleet/deployments.yaml", "replicas: 2", 'replicas: "two"')

    run = modelplane("render", repo.root)

    assert run.code == 1
    assert run.errors() == [
        f"error: {repo.path('fleet/deployments.yaml')}:5: ModelDeployment.modelplane.ai "
        '"llama-8b" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body '
        'must be of type integer: "string"'
    ]


CLUSTER_MISTAKES = [
    (
        'queue: "{{ .Namespace }}"',
        'queue: "{{ .Foo }}"',
        "SchedulingConfigured=False (InvalidScheduling): spec.scheduling.queue: "
        "unknown variable .Foo",
    ),
    (
        'example.com/team: "{{ .Namespace }}"',
        'example.com/team: "{{ .Team }}"',
        "SchedulingConfigured=False (InvalidScheduling): "
        "spec.scheduling.defaultLabels[example.com/team]: unknown variable .Team",
    ),
    (
        "  backend:\n    type: Native",
        '  tenancy:\n    namespace: "mp-{{ .Namespace }}-{{ .Team }}"\n'
        "  backend:\n    type: Native",
        "TenancyConfigured=False (InvalidTenancy): spec.tenancy.namespace: unknown variable .Team",
    ),
]


@pytest.mark.parametrize(("old", "new", "said"), CLUSTER_MISTAKES)
def test_a_mistake_in_a_cluster_s_templates_is_one_line_at_the_cluster(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    """Every replica on the cluster refuses to render with it, and its deployment
    quotes each replica: those are echoes of the one line at the cluster's source."""
    repo = Fleet(tmp_path / "my-fleet", "catalog", "fleet")
    repo.replace("fleet/clusters.yaml", old, new)

    run = modelplane("render", repo.root)

    assert run.code == 1
    (line,) = run.errors()
    assert line.startswith(
        f"error: {repo.path('fleet/clusters.yaml')}:4: InferenceCluster prod-us-east: {said}"
    )


def test_a_refused_value_is_located_where_its_path_matches_not_where_it_first_occurs(
    tmp_path: Path,
) -> None:
    # `1` is also llama-8b's device count and worker count: an argument of 1 is a
    # mistake in args, which the refused field's path (…containers[0].args[0]) says.
    repo = Fleet(tmp_path / "my-fleet", "catalog", "fleet")
    repo.replace(
        "fleet/deployments.yaml",
        'args: ["--model=meta-llama/Llama-3.1-8B-Instruct", "--max-model-len=8192"]',
        "args: [1]",
    )

    run = modelplane("render", repo.root)

    assert run.code == 1
    (line,) = run.errors()
    assert (
        "ModelDeployment ml-team-prod/llama-8b: spec.workers.template.spec.containers[0].args[0]: "
        '"1": Invalid value: "integer": spec.template.containers[0].args[0] in body must be of '
        'type string: "integer"'
    ) in line
