"""A replica updated in place whose change the provider has not applied yet.

Crossplane writes the workload Object's new manifest at once; provider-kubernetes
applies it later, and until then the Object reads back the workload as it ran: old
spec, Ready. Here that read-back is held stale (the Object is given to the render
with the status the provider last read, which the simulated provider keeps while
the Object's spec does not change), and the rollout must count the replica as not
serving the new revision: the next replica waits, so maxUnavailable holds.
"""

from __future__ import annotations

from pathlib import Path

from modelplane_cli import yamlio

from .cli import Obj, Run, rounds
from .test_rollouts import NEW_IMAGE, OLD_IMAGE, REVISION, _edit, _fleet, _replicas, _running


def _workload_objects(run: Run) -> dict[str, Obj]:
    """Each replica's workload Object, by replica name."""
    return {
        o["metadata"]["labels"]["modelplane.ai/replica"]: o
        for o in run.objects
        if o["kind"] == "Object"
        and o["spec"]["forProvider"]["manifest"]["kind"] in ("Deployment", "LeaderWorkerSet")
    }


def _image(manifest: Obj) -> str:
    return manifest["spec"]["template"]["spec"]["containers"][0]["image"]


def _not_serving_new(run: Run, revision: str) -> set[str]:
    """Replicas down for the rollout: not Ready, or updated to `revision` and not yet
    running it on the cluster (the workload read back runs another image)."""
    objects = _workload_objects(run)
    down: set[str] = set()
    for replica in _replicas(run):
        name = replica["metadata"]["name"]
        obj = objects[name]
        read = obj.get("status", {}).get("atProvider", {}).get("manifest")
        applied = read is not None and _image(read) == _image(
            obj["spec"]["forProvider"]["manifest"]
        )
        ready = {c["type"]: c["status"] for c in obj["status"]["conditions"]}.get("Ready") == "True"
        updated = replica["metadata"]["annotations"][REVISION] == revision
        if not ready or (updated and not applied):
            down.add(name)
    return down


def test_a_stale_read_back_holds_the_next_replica(tmp_path: Path) -> None:
    repo = _fleet(tmp_path, [("east", "a", 2)], replicas=2)
    world = _running(repo, tmp_path)
    running = _workload_objects(Run(0, world.read_text(), ""))
    repo.replace("fleet.yaml", OLD_IMAGE, NEW_IMAGE)
    _edit(
        repo,
        lambda d: d["spec"].__setitem__(
            "strategy", {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
        ),
    )
    argv = ("render", "--observed")

    (first,) = rounds(*argv, world, repo.root, "-o", "yaml", count=1)
    revisions = {
        r["metadata"]["name"]: r["metadata"]["annotations"][REVISION] for r in _replicas(first)
    }
    new = set(revisions.values()) - {
        r["metadata"]["annotations"][REVISION] for r in _replicas(Run(0, world.read_text(), ""))
    }
    (revision,) = new
    (updated,) = [name for name, rev in revisions.items() if rev == revision]
    (waiting,) = [name for name in revisions if name != updated]

    # The updated replica's Object as Crossplane wrote it, reading back what the
    # provider last read: the old workload, serving.
    target = _workload_objects(first)[updated]["metadata"]["name"]
    objects = first.objects
    for obj in objects:
        if obj["kind"] == "Object" and obj["metadata"]["name"] == target:
            assert _image(obj["spec"]["forProvider"]["manifest"]) == NEW_IMAGE
            obj["status"] = running[updated]["status"]
            assert _image(obj["status"]["atProvider"]["manifest"]) == OLD_IMAGE
    stale = tmp_path / "stale.yaml"
    stale.write_text(yamlio.dump_all(objects))

    runs = rounds(*argv, stale, repo.root, "-o", "yaml", count=3)

    for n, run in enumerate(runs, start=1):
        held = run.one("ModelReplica", waiting)
        assert held["metadata"]["annotations"][REVISION] != revision, n
        assert held["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] == OLD_IMAGE
        assert _not_serving_new(run, revision) == {updated}, n
        progressing = run.condition("ModelDeployment", "chat", "Progressing")
        assert progressing["message"].endswith(f"waiting for {updated} to serve"), progressing
    for n, run in enumerate(runs, start=1):
        replica = run.one("ModelReplica", updated)
        serving = {c["type"]: c for c in replica["status"]["conditions"]}["Serving"]
        assert serving["status"] == "False", (n, serving)
        assert (
            "the change is not applied to the cluster yet (its read-back carries"
            in (serving["message"])
        )
        # A revision is published only with a True verdict (Crossplane writes the
        # status and the conditions in two writes).
        assert replica["status"]["servingRevision"] == ""
