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


def test_sources_the_world_does_not_track_prune_nothing_and_say_so(
    world: Path, repo: Fleet
) -> None:
    """Tracking marks on the world, but none on the sources' objects (a first sync, or
    a world exported from another Application): which objects are this repository's
    is unknown, so nothing is pruned, and the job log says why."""
    _mark(world, None, llama_8b=argo("team-b"))
    _drop(repo, "fleet/deployments.yaml", "llama-8b")
    _drop(repo, "fleet/deployments.yaml", "kimi-k2")

    run = preview(world, repo)

    assert (run.code, run.out) == (0, "No changes.\n"), run.err
    (note,) = run.err.splitlines()
    assert note.startswith("note: the running world's objects record which sync applied them")
    assert note.endswith("so none is pruned")
