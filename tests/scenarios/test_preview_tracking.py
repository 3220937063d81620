"""The CI gate on a control plane several repositories sync to: a sync with pruning
deletes only what it applied, as the world's tracking marks say (Argo CD, Flux).

Team A's repository holds the catalog, the clusters, their Secrets and two of the
three deployments; llama-8b is team B's, applied by another Application.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from modelplane_cli import yamlio

from .cli import Fleet, Obj, preview

Mark = Callable[[Obj], None]
INSTANCE = "app.kubernetes.io/instance"


def argo(application: str) -> Mark:
    """Argo CD's annotation tracking, as its Application writes it on what it applies."""

    def mark(doc: Obj) -> None:
        meta = doc["metadata"]
        group = doc["apiVersion"].rpartition("/")[0]
        identity = f"{group}/{doc['kind']}:{meta.get('namespace', '')}/{meta['name']}"
        meta.setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = (
            f"{application}:{identity}"
        )

    return mark


def flux(name: str) -> Mark:
    """Flux's kustomize-controller labels, as its Kustomization writes them."""

    def mark(doc: Obj) -> None:
        labels = doc["metadata"].setdefault("labels", {})
        labels["kustomize.toolkit.fluxcd.io/name"] = name
        labels["kustomize.toolkit.fluxcd.io/namespace"] = "flux-system"

    return mark


def annotated(key: str, value: str) -> Mark:
    def mark(doc: Obj) -> None:
        doc["metadata"].setdefault("annotations", {})[key] = value

    return mark


def _mark(world: Path, every: Mark | None, **only: Mark) -> None:
    """`every` on each object of the world nothing composed (what a sync applied), and
    the marks of `only` (by name) on those objects too, after it."""
    docs: list[Obj] = [d for d in yamlio.load_all(world.read_text()) if d is not None]
    for doc in docs:
        if any(ref.get("controller") for ref in doc["metadata"].get("ownerReferences", [])):
            continue
        if every is not None:
            every(doc)
        extra = only.get(doc["metadata"]["name"].replace("-", "_"))
        if extra is not None:
            extra(doc)
    world.write_text(yamlio.dump_all(docs))


def _drop(repo: Fleet, relative: str, name: str) -> None:
    docs = [d for d in yamlio.load_all(repo.text(relative)) if d is not None]
    kept = [d for d in docs if d["metadata"]["name"] != name]
    assert len(kept) == len(docs) - 1
    repo.path(relative).write_text(yamlio.dump_all(kept))


def test_another_teams_deployment_is_not_this_repositorys_to_prune(
    world: Path, repo: Fleet
) -> None:
    _mark(world, argo("team-a"), llama_8b=argo("team-b"))
    _drop(repo, "fleet/deployments.yaml", "llama-8b")

    run = preview(world, repo)

    assert (run.code, run.out, run.err) == (0, "No changes.\n", ""), run.err


def test_a_deployment_the_repository_stopped_holding_is_pruned_naming_its_sync(
    world: Path, repo: Fleet
) -> None:
    _mark(world, argo("team-a"), llama_8b=argo("team-b"))
    _drop(repo, "fleet/deployments.yaml", "llama-8b")
    _drop(repo, "fleet/deployments.yaml", "kimi-k2")

    run = preview(world, repo)

    assert run.code == 1
    (line,) = run.errors()
    assert (
        "ModelDeployment ml-team-prod/kimi-k2 (applied by Argo CD Application team-a): "
        "no source holds it: a sync with pruning deletes it and the " in line
    ), line
    removed = [x for x in run.out.splitlines() if x.startswith("removed  ")]
    assert "removed  ModelDeployment ml-team-prod/kimi-k2" in removed
    assert not [x for x in removed if "llama-8b" in x]


def test_the_last_of_a_kind_is_pruned_when_the_world_says_who_applied_it(
    world: Path, repo: Fleet
) -> None:
    """Without tracking marks a kind the sources hold none of is left alone with a note;
    with them, a deployment this repository's Kustomization applied is its to prune."""
    _mark(world, flux("team-a"))
    repo.path("fleet/deployments.yaml").unlink()

    run = preview(world, repo, "--allow-prune")

    assert run.code == 0, run.err
    notes = [x for x in run.err.splitlines() if "no source holds it" in x]
    assert len(notes) == 3, run.err
    assert all("(applied by Flux Kustomization flux-system/team-a)" in x for x in notes)
    assert "not compared" not in run.err


def test_what_the_sync_tool_is_told_to_keep_is_not_pruned(world: Path, repo: Fleet) -> None:
    _mark(
        world,
        argo("team-a"),
        llama_8b=annotated("argocd.argoproj.io/sync-options", "ServerSideApply=true,Prune=false"),
        kimi_k2=annotated("kustomize.toolkit.fluxcd.io/prune", "disabled"),
    )
    _drop(repo, "fleet/deployments.yaml", "llama-8b")
    _drop(repo, "fleet/deployments.yaml", "kimi-k2")

    run = preview(world, repo)

    assert (run.code, run.out) == (0, "No changes.\n"), run.err


def test_a_referenced_object_the_sync_applied_and_the_repository_dropped_dangles(
    world: Path, repo: Fleet
) -> None:
    """A Secret this repository's sync applied and no longer holds is deleted, so the
    cluster naming it fails; the other teams' objects of its kind are left alone."""
    _mark(world, argo("team-a"), prod_eu_west_kubeconfig=argo("platform"))
    _drop(repo, "fleet/secrets.yaml", "prod-us-east-kubeconfig")
    _drop(repo, "fleet/secrets.yaml", "prod-eu-west-kubeconfig")

    run = preview(world, repo)

    assert run.code == 1
    dangling = [x for x in run.errors() if "in the input" in x]
    assert dangling, run.err
    assert all("prod-us-east-kubeconfig" in x for x in dangling), dangling


def test_without_marks_on_the_sources_another_syncs_objects_are_left_alone(
    world: Path, repo: Fleet
) -> None:
    """Marks on the world, none on the sources' copies (a first sync, or a repository
    no tool marks): pruning is by kind, but what a tool marked as another sync's is
    not this repository's to delete."""
    _mark(world, None, llama_8b=argo("team-b"))
    _drop(repo, "fleet/deployments.yaml", "llama-8b")
    _drop(repo, "fleet/deployments.yaml", "kimi-k2")

    run = preview(world, repo)

    assert run.code == 1
    (line,) = run.errors()
    assert "ModelDeployment ml-team-prod/kimi-k2: no source holds it" in line, line
    assert "llama-8b" not in run.out


def test_a_helm_instance_label_in_the_world_does_not_turn_pruning_off(
    world: Path, repo: Fleet
) -> None:
    """Helm writes `app.kubernetes.io/instance` on what it installs: a PriorityClass the
    platform's chart put there is not a sign that the world records which sync applied
    the sources, so a deleted deployment is still caught."""
    docs: list[Obj] = [d for d in yamlio.load_all(world.read_text()) if d is not None]
    docs.append(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "platform-critical", "labels": {INSTANCE: "platform"}},
            "value": 1000000,
        }
    )
    world.write_text(yamlio.dump_all(docs))
    _drop(repo, "fleet/deployments.yaml", "llama-8b")

    run = preview(world, repo)

    assert run.code == 1
    (line,) = run.errors()
    assert "ModelDeployment ml-team-prod/llama-8b: no source holds it" in line, line


def test_an_instance_label_the_repository_writes_itself_is_not_a_syncs_mark(
    world: Path, repo: Fleet
) -> None:
    """Sources that carry the recommended `app.kubernetes.io/instance` label themselves,
    over the world their last render wrote: the label is the repository's, so a
    deleted deployment is pruned by kind and caught."""

    def labelled(doc: Obj) -> None:
        doc["metadata"].setdefault("labels", {})[INSTANCE] = doc["metadata"]["name"]

    line = _delete_llama_from_labelled_sources(world, repo, labelled, labelled)

    assert "ModelDeployment ml-team-prod/llama-8b: no source holds it" in line, line


def test_the_tools_annotation_counts_beside_the_repositorys_own_instance_label(
    world: Path, repo: Fleet
) -> None:
    """Argo CD 3's annotation tracking, and sources that label themselves with the same
    Application's name: the annotation still says which sync applied them, so a
    deleted deployment is that sync's to prune (final-t-d F1)."""

    team_a = labelled_with(INSTANCE, "team-a")
    marked = argo("team-a")

    def both(doc: Obj) -> None:
        marked(doc)
        team_a(doc)

    line = _delete_llama_from_labelled_sources(world, repo, team_a, both)

    assert "llama-8b (applied by Argo CD Application team-a): no source holds it" in line, line


def labelled_with(key: str, value: str) -> Mark:
    def mark(doc: Obj) -> None:
        doc["metadata"].setdefault("labels", {})[key] = value

    return mark


def _delete_llama_from_labelled_sources(
    world: Path, repo: Fleet, source_label: Mark, world_marks: Mark
) -> str:
    """The three deployments labelled by `source_label` in the repository and marked by
    `world_marks` in the world, then llama-8b deleted: the one error line."""
    deployments = ("llama-8b", "kimi-k2", "deepseek-r1")
    for name in deployments:
        repo.edit("fleet/deployments.yaml", "ModelDeployment", name, source_label)
    _mark(world, None, **{name.replace("-", "_"): world_marks for name in deployments})
    _drop(repo, "fleet/deployments.yaml", "llama-8b")

    run = preview(world, repo)

    assert run.code == 1
    (line,) = run.errors()
    return line
