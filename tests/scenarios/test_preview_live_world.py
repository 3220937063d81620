"""The CI preview over a running world as a cluster export gives it, and sources as a
GitOps repository writes them: what an apply leaves alone is no change.

A live export carries what the API server and Crossplane write (finalizers,
resourceVersion, managedFields, ...); a source may carry a `status` (as
`kubectl create --dry-run -o yaml` writes one) or leave `spec.replicas` to an
autoscaler. None of that is a change a sync makes.
"""

from __future__ import annotations

from pathlib import Path

from modelplane_cli import yamlio

from .cli import Fleet, Obj, preview

_LIVE_METADATA = {
    "resourceVersion": "4711",
    "creationTimestamp": "2026-11-01T00:00:00Z",
    "generation": 3,
    "managedFields": [{"manager": "crossplane", "operation": "Apply"}],
}


def _as_exported(world: Path) -> None:
    """The world as `kubectl get -o yaml` exports it: server-written metadata on every
    object, Crossplane's finalizer on composites and composed Objects."""
    docs: list[Obj] = [d for d in yamlio.load_all(world.read_text()) if d is not None]
    for doc in docs:
        meta = doc.setdefault("metadata", {})
        for name, value in _LIVE_METADATA.items():
            meta.setdefault(name, value)
        if doc["apiVersion"].startswith("modelplane.ai/"):
            meta["finalizers"] = ["composite.apiextensions.crossplane.io"]
        elif doc["kind"] == "Object":
            meta["finalizers"] = ["finalizer.managedresource.crossplane.io"]
    world.write_text(yamlio.dump_all(docs))


def test_a_live_export_of_an_unchanged_fleet_previews_no_change(world: Path, repo: Fleet) -> None:
    _as_exported(world)

    run = preview(world, repo, "--fail-on", "error")

    assert (run.code, run.out) == (0, "No changes.\n"), (run.out, run.err)


def test_a_status_in_a_source_is_no_change(world: Path, repo: Fleet) -> None:
    def with_status(deployment: Obj) -> None:
        deployment["status"] = {}

    for name in ("llama-8b", "kimi-k2", "deepseek-r1"):
        repo.edit("fleet/deployments.yaml", "ModelDeployment", name, with_status)

    run = preview(world, repo, "--fail-on", "error")

    assert (run.code, run.out) == (0, "No changes.\n"), (run.out, run.err)


def _managed(world: Path, name: str, entry: Obj) -> None:
    """The world's ModelDeployment `name` with `entry` as its one managedFields entry."""
    docs: list[Obj] = [d for d in yamlio.load_all(world.read_text()) if d is not None]
    (target,) = [
        d for d in docs if d["kind"] == "ModelDeployment" and d["metadata"]["name"] == name
    ]
    target["metadata"]["managedFields"] = [entry]
    world.write_text(yamlio.dump_all(docs))


def _without_replicas(deployment: Obj) -> None:
    assert deployment["spec"].pop("replicas") == 2


def test_replicas_left_to_an_autoscaler_are_kept(world: Path, repo: Fleet) -> None:
    """llama-8b runs 2 replicas, last set through its scale subresource: a source that
    leaves `spec.replicas` to the autoscaler keeps them, as an apply does; so does a
    world that records no managedFields (kubectl's default export), where the render
    cannot tell who owns them."""
    repo.edit("fleet/deployments.yaml", "ModelDeployment", "llama-8b", _without_replicas)
    unknown = preview(world, repo, "--fail-on", "error")
    assert (unknown.code, unknown.out) == (0, "No changes.\n"), (unknown.out, unknown.err)
    # ... and says so, since a sync whose own apply set them would reset them.
    (note,) = [line for line in unknown.err.splitlines() if "spec.replicas" in line]
    assert note.startswith("note: ") and "ModelDeployment" in note and "llama-8b" in note, note
    assert "records no managedFields, so the render keeps the running 2;" in note, note
    _managed(world, "llama-8b", {"manager": "keda", "operation": "Update", "subresource": "scale"})

    run = preview(world, repo, "--fail-on", "error")

    assert (run.code, run.out) == (0, "No changes.\n"), (run.out, run.err)
    assert "spec.replicas" not in run.err, run.err  # the scale write says who owns them


def test_replicas_kept_at_the_default_need_no_note(world: Path, repo: Fleet) -> None:
    """deepseek-r1 runs 1 replica, the default: kept or reset, it stays 1, so the
    preview says nothing about it."""

    def without(deployment: Obj) -> None:
        assert deployment["spec"].pop("replicas") == 1

    repo.edit("fleet/deployments.yaml", "ModelDeployment", "deepseek-r1", without)

    run = preview(world, repo, "--fail-on", "error")

    assert (run.code, run.out, run.err) == (0, "No changes.\n", ""), (run.out, run.err)


def test_replicas_removed_from_a_source_that_set_them_go_back_to_the_default(
    world: Path, repo: Fleet
) -> None:
    """The world's managedFields say only the sync's apply set llama-8b's replicas:
    leaving them out resets them to the default of 1, as `kubectl apply` does, and the
    preview shows the scale-down."""
    _managed(world, "llama-8b", {"manager": "argocd-controller", "operation": "Apply"})
    repo.edit("fleet/deployments.yaml", "ModelDeployment", "llama-8b", _without_replicas)

    run = preview(world, repo, "--fail-on", "error")

    assert run.code == 0, run.err
    assert run.out.splitlines()[-1].endswith("1 removed"), run.out


def test_managed_fields_that_are_not_a_list_are_no_crash(world: Path, repo: Fleet) -> None:
    """A world whose managedFields are not a list: admission names the field, one line
    an object, as for any bad metadata (it raised a TypeError out of the render)."""
    docs: list[Obj] = [d for d in yamlio.load_all(world.read_text()) if d is not None]
    for doc in docs:
        if doc["kind"] == "ModelDeployment":
            doc["metadata"]["managedFields"] = 5
    world.write_text(yamlio.dump_all(docs))
    repo.edit("fleet/deployments.yaml", "ModelDeployment", "llama-8b", _without_replicas)

    run = preview(world, repo, "--fail-on", "never")

    assert run.code == 1
    assert "Traceback" not in run.err
    bad = [x for x in run.errors() if "metadata.managedFields in body must be of type array" in x]
    assert len(bad) == 3, run.err
