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


def test_replicas_left_to_an_autoscaler_are_kept(world: Path, repo: Fleet) -> None:
    """llama-8b runs 2 replicas; a source that leaves `spec.replicas` (the scale
    subresource's field) to an autoscaler keeps them, as an apply does."""

    def autoscaled(deployment: Obj) -> None:
        assert deployment["spec"].pop("replicas") == 2

    repo.edit("fleet/deployments.yaml", "ModelDeployment", "llama-8b", autoscaled)

    run = preview(world, repo, "--fail-on", "error")

    assert (run.code, run.out) == (0, "No changes.\n"), (run.out, run.err)
