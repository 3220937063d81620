"""The CI gate sees what a GitOps sync does: deletions, dangling names, an empty path.

    modelplane render --observed world.yaml my-fleet/ -o diff --fail-on error

Each mistake fails the job with one line naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from modelplane_cli.render.references import REFERENCES, Reference, unresolved

from .cli import Fleet, modelplane, preview


def _delete_llama(repo: Fleet) -> None:
    text = repo.text("fleet/deployments.yaml")
    docs = text.split("\n---\n")
    kept = [d for d in docs if "name: llama-8b\n" not in d]
    assert len(kept) == len(docs) - 1
    repo.path("fleet/deployments.yaml").write_text("\n---\n".join(kept))


def test_a_deleted_deployment_is_removed_with_all_it_composed(world: Path, repo: Fleet) -> None:
    _delete_llama(repo)

    run = preview(world, repo)

    assert run.code == 1
    (line,) = run.errors()
    assert "ModelDeployment ml-team-prod/llama-8b: no source holds it" in line
    assert line.startswith(f"error: {world}:")
    removed = [x for x in run.out.splitlines() if x.startswith("removed  ")]
    assert "removed  ModelDeployment ml-team-prod/llama-8b" in removed
    assert sum("ModelReplica ml-team-prod/llama-8b-" in x for x in removed) == 2
    assert sum(x.startswith("removed  Object ") for x in removed) >= 2
    assert run.out.splitlines()[-1].endswith("replicas: 0 placed, 0 moved, 0 replaced, 2 removed")


def test_a_deletion_is_shown_but_passes_at_fail_on_never(world: Path, repo: Fleet) -> None:
    _delete_llama(repo)

    run = preview(world, repo, "--fail-on", "never")

    assert run.code == 0, run.err
    assert "removed  ModelDeployment ml-team-prod/llama-8b" in run.out


def test_allow_prune_accepts_the_deletion_and_names_it(world: Path, repo: Fleet) -> None:
    _delete_llama(repo)

    run = preview(world, repo, "--allow-prune")

    assert (run.code, run.errors()) == (0, []), run.err
    (note,) = [x for x in run.err.splitlines() if "llama-8b" in x]
    assert note.startswith(f"note: {world}:")
    assert note.endswith(
        "ModelDeployment ml-team-prod/llama-8b: no source holds it: a sync with pruning "
        "deletes it and the 10 objects it composed (accepted: --allow-prune)"
    )
    assert "removed  ModelDeployment ml-team-prod/llama-8b" in run.out


def test_allow_prune_still_fails_every_other_check(world: Path, repo: Fleet) -> None:
    """Decommissioning a model and shrinking its pool in one pull request."""
    _delete_llama(repo)
    repo.replace(
        "fleet/clusters.yaml",
        "{name: h100, className: h100-8x, nodeCount: 4}",
        "{name: h100, className: h100-8x, nodeCount: 1}",
    )

    run = preview(world, repo, "--allow-prune")

    assert run.code == 1
    (line,) = run.errors()
    assert line.startswith("error: InferenceCluster prod-us-east pool h100 is overcommitted")


def test_allow_prune_and_no_prune_contradict_each_other(world: Path, repo: Fleet) -> None:
    run = preview(world, repo, "--allow-prune", "--no-prune")

    assert run.code == 2
    assert "not allowed with argument" in run.err


def test_no_prune_keeps_what_the_sources_no_longer_hold(world: Path, repo: Fleet) -> None:
    _delete_llama(repo)

    run = preview(world, repo, "--no-prune")

    assert (run.code, run.out) == (0, "No changes.\n"), run.err


def test_a_misspelt_priority_fails_with_its_field_and_value(world: Path, repo: Fleet) -> None:
    repo.replace("fleet/deployments.yaml", "priority: inference", "priority: super-urgent")

    run = preview(world, repo)

    assert run.code == 1
    lines = [x for x in run.errors() if "super-urgent" in x and "PriorityClass" in x]
    assert lines == [
        f"error: {repo.path('fleet/deployments.yaml')}:42: ModelDeployment "
        'ml-team-prod/kimi-k2: spec.priority: "super-urgent": no PriorityClass super-urgent '
        "in the input (the input has: inference, train)"
    ]


def test_priorities_are_not_checked_when_the_input_holds_none(repo: Fleet) -> None:
    repo.path("catalog/priorityclasses.yaml").unlink()
    repo.replace("fleet/deployments.yaml", "priority: inference", "priority: super-urgent")

    run = modelplane("render", repo.root)

    assert not [x for x in run.errors() if "no PriorityClass" in x]


def test_a_missing_kubeconfig_secret_fails(repo: Fleet) -> None:
    repo.replace("fleet/clusters.yaml", "name: prod-eu-west-kubeconfig", "name: prod-eu-wset")

    run = modelplane("render", repo.root)

    assert run.code == 1
    (line,) = [x for x in run.errors() if "Secret" in x]
    assert line.endswith(
        "InferenceCluster prod-eu-west: spec.cluster.existing.secretRef: "
        '"prod-eu-wset": no Secret modelplane-system/prod-eu-wset in the input '
        "(the input has: prod-eu-west-kubeconfig, prod-us-east-kubeconfig)"
    )


@pytest.mark.parametrize(
    ("relative", "old", "new", "key"),
    [
        (
            "fleet/clusters.yaml",
            "name: prod-eu-west-kubeconfig, namespace: modelplane-system}",
            "name: prod-eu-west-kubeconfig, namespace: modelplane-system, key: config}",
            "config",
        ),
        (
            "fleet/secrets.yaml",
            'kubeconfig: "# the kubeconfig of prod-eu-west',
            'config: "# the kubeconfig of prod-eu-west',
            "kubeconfig",
        ),
    ],
)
def test_a_kubeconfig_secret_without_its_key_fails(
    repo: Fleet, relative: str, old: str, new: str, key: str
) -> None:
    """The Secret exists but holds no `secretRef.key` (default `kubeconfig`): the
    provider reads an empty kubeconfig and never reaches the cluster."""
    repo.replace(relative, old, new)

    run = modelplane("render", repo.root)

    assert run.code == 1
    (line,) = [x for x in run.errors() if "prod-eu-west:" in x]
    assert line == (
        f"error: {repo.path('fleet/clusters.yaml')}:43: InferenceCluster prod-eu-west: "
        f'spec.cluster.existing.secretRef.key: "{key}": Secret '
        f"modelplane-system/prod-eu-west-kubeconfig holds no key {key} "
        f"(it has: {'kubeconfig' if key == 'config' else 'config'})"
    )


def _drop_document(repo: Fleet, relative: str, name: str) -> None:
    text = repo.text(relative)
    docs = text.split("\n---\n")
    kept = [d for d in docs if f"name: {name}\n" not in d]
    assert len(kept) == len(docs) - 1
    repo.path(relative).write_text("\n---\n".join(kept))


def test_a_referenced_object_deleted_from_the_sources_fails_as_without_a_world(
    world: Path, repo: Fleet
) -> None:
    """A sync with pruning deletes the PriorityClass and the kubeconfig Secret the
    repository no longer holds, although the running world still has them."""
    _drop_document(repo, "catalog/priorityclasses.yaml", "inference")
    _drop_document(repo, "fleet/secrets.yaml", "prod-us-east-kubeconfig")

    run = preview(world, repo)
    alone = modelplane("render", repo.root)

    assert run.code == 1
    dangling = [x for x in run.errors() if "in the input" in x]
    assert len(dangling) == 5, run.err
    assert sorted(dangling) == sorted(x for x in alone.errors() if "in the input" in x)
    assert any(
        'spec.cluster.existing.secretRef: "prod-us-east-kubeconfig": no Secret '
        "modelplane-system/prod-us-east-kubeconfig in the input" in x
        for x in dangling
    )
    # A sync without pruning keeps them: nothing dangles.
    kept = preview(world, repo, "--no-prune")
    assert (kept.code, kept.out) == (0, "No changes.\n"), kept.err


def test_a_kind_the_sources_hold_none_of_is_checked_against_the_world(
    world: Path, repo: Fleet
) -> None:
    """A repository that does not carry its Secrets leaves them to the world, and the
    job's log says which ones a sync that had applied them would delete."""
    repo.path("fleet/secrets.yaml").unlink()

    run = preview(world, repo)

    assert (run.code, run.out) == (0, "No changes.\n"), run.err
    assert run.err.splitlines() == [
        "note: 2 Secrets the sources name (modelplane-system/prod-eu-west-kubeconfig, "
        "modelplane-system/prod-us-east-kubeconfig) are in the running world only: a sync "
        "with pruning that applied them deletes them"
    ]


def test_an_empty_directory_is_one_clear_error(world: Path, tmp_path: Path) -> None:
    empty = tmp_path / "emtpy"
    empty.mkdir()

    run = modelplane("render", "--observed", world, empty, "-o", "diff")

    assert (run.code, run.out) == (1, "")
    assert run.errors() == [f"error: {empty}: no .yaml, .yml or .json file under this directory"]


def test_sources_without_a_composite_are_an_error(world: Path, repo: Fleet) -> None:
    only_secrets = repo.path("fleet/secrets.yaml")

    alone = modelplane("render", only_secrets)
    over_world = modelplane("render", "--observed", world, only_secrets, "-o", "diff")

    assert (alone.code, alone.errors()) == (
        1,
        [f"error: {only_secrets}: no composite in the input (nothing to render)"],
    )
    assert (over_world.code, over_world.errors()) == (
        1,
        [
            f"error: {only_secrets}: no composite among the sources (nothing to apply over --observed)"
        ],
    )


def test_a_new_kind_of_reference_is_one_row() -> None:
    cache_row = Reference(
        "ModelDeployment", "spec.caches[].cacheRef", "ModelCache", namespaced=True
    )
    deployment = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "m", "namespace": "team"},
        "spec": {"caches": [{"cacheRef": {"name": "weights"}}, {"cacheRef": {"name": "gone"}}]},
    }
    cache = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "team"},
    }

    found = unresolved([deployment, cache], references=[*REFERENCES, cache_row])
    without_caches = unresolved([deployment], references=[*REFERENCES, cache_row])

    assert found == [
        'ModelDeployment team/m: spec.caches[1].cacheRef: "gone": no ModelCache team/gone '
        "in the input (the input has: weights)"
    ]
    assert without_caches == []


def test_a_misspelt_model_cache_fails_with_its_field_and_value(tmp_path: Path) -> None:
    caching = Fleet(tmp_path / "caching", "catalog", "caching")
    caching.replace(
        "caching/models.yaml", "cacheRef: {name: qwen-7b}", "cacheRef: {name: qwen-8b}", count=2
    )

    run = modelplane("render", caching.root)

    assert run.code == 1
    lines = [x for x in run.errors() if "no ModelCache" in x]
    assert len(lines) == 2  # both deployments name it: two mistakes, one line each
    assert all('spec.model.cacheRef: "qwen-8b": no ModelCache ' in x for x in lines)
    assert all("(the input has: qwen-7b)" in x for x in lines)


def _caching(tmp_path: Path) -> tuple[Fleet, Path]:
    """The caching example as a repository, and its running world."""
    caching = Fleet(tmp_path / "caching", "catalog", "caching")
    rendered = modelplane("render", caching.root, "-o", "yaml")
    assert rendered.code == 0, rendered.err
    world = tmp_path / "world.yaml"
    world.write_text(rendered.out)
    return caching, world


def test_pruning_a_cache_a_usage_protects_is_refused(tmp_path: Path) -> None:
    """Crossplane's usage webhook refuses the sync's DELETE of a ModelCache its
    deployments still use: the cache and its downloads stay."""
    caching, world = _caching(tmp_path)
    # Another ModelCache keeps the kind in the sources; qwen-7b is no longer held.
    caching.replace("caching/models.yaml", "  name: qwen-7b\n", "  name: qwen-7b-next\n")

    for flags in ((), ("--allow-prune",)):
        run = preview(world, caching, *flags)

        assert run.code == 1
        (line,) = [x for x in run.errors() if "ModelCache chat-team/qwen-7b:" in x]
        assert line.startswith(f"error: {world}:")
        assert line.endswith(
            "ModelCache chat-team/qwen-7b: no source holds it, but a sync with pruning "
            'cannot delete it: admission webhook "nousages.protection.crossplane.io" denied '
            "the request: This resource is in-use by 2 usage(s), including the "
            '*v1beta1.Usage "qwen-batch-modelcache-05c7e4b2f1" (in namespace "chat-team") '
            "by resource ModelDeployment/qwen-batch."
        )
        assert "removed  ModelCache chat-team/qwen-7b\n" not in run.out
        assert not [x for x in run.errors() if "ModelCacheNotFound" in x], run.err


def test_a_kind_the_sources_no_longer_hold_is_named_in_a_note(world: Path, repo: Fleet) -> None:
    """The contract leaves a kind the sources hold none of alone, but a sync with
    pruning that applied those composites deletes them: the job log says so."""
    repo.path("fleet/deployments.yaml").unlink()

    run = preview(world, repo)
    kept = preview(world, repo, "--no-prune")

    assert (run.code, run.out) == (0, "No changes.\n"), run.err
    assert run.err.splitlines() == [
        "note: 3 ModelDeployments of the running world are not compared: the sources hold "
        "none of the kind; a sync with pruning that applied them deletes them"
    ]
    assert (kept.code, kept.out, kept.err) == (0, "No changes.\n", "")


def test_a_secret_of_the_teams_own_namespace_leaves_the_platforms_to_the_world(
    world: Path, repo: Fleet
) -> None:
    """A team's repository holds a Secret of its namespace, not the platform's kubeconfig
    Secrets: those stay the world's, and nothing dangles."""
    repo.path("fleet/secrets.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: hf-token, namespace: ml-team-prod}\n"
        "stringData: {token: x}\n"
    )

    run = preview(world, repo)

    assert run.code == 0, run.err
    assert not [x for x in run.errors() if "in the input" in x], run.err


def test_a_cache_decommissioned_with_its_users_is_a_deletion_crossplane_replays(
    tmp_path: Path,
) -> None:
    """The deployments stop naming the cache in the same pull request: once no Usage
    holds it, Crossplane replays the delete its webhook refused first (or the next sync
    retries it), so the cache goes: an intended deletion, which --allow-prune accepts."""
    caching, world = _caching(tmp_path)
    caching.replace("caching/models.yaml", "  name: qwen-7b\n", "  name: qwen-7b-next\n")
    caching.replace(
        "caching/models.yaml", "cacheRef: {name: qwen-7b}", "cacheRef: {name: qwen-7b-next}", 2
    )

    run = preview(world, caching)
    accepted = preview(world, caching, "--allow-prune")

    assert run.code == 1
    (line,) = [x for x in run.errors() if "ModelCache chat-team/qwen-7b:" in x]
    assert "a sync with pruning deletes it once no Usage holds it" in line
    assert accepted.code == 0, accepted.err
    assert any(
        "ModelCache chat-team/qwen-7b: no source holds it: a sync with pruning deletes it once" in x
        for x in accepted.err.splitlines()
    ), accepted.err
