"""Break after unroute: a rollout removes a replica only after the hub route stops
sending to it.

The serving example runs; an image bump of `qwen-l4` (one replica, 30% of the
route) replaces its replica make-before-break. Round by round, the old replica's
ModelEndpoint goes first while its ModelReplica (and with it the replica route on
its cluster) stays; only once the ModelService's route no longer lists it is it
deleted. The timeline prices the same steps on a control plane, where the
ModelService reads the endpoints only on its TTL: the deletion comes after the
route's rewrite, never before it.
"""

from __future__ import annotations

from pathlib import Path

from .cli import Fleet, Obj, Run, modelplane, rendered, rounds

OLD_IMAGE, NEW_IMAGE = "vllm/vllm-openai:v0.8.5", "vllm/vllm-openai:v0.9.0"
SERVED = "qwen-l4"


def _names(run: Run, kind: str) -> set[str]:
    return {
        o["metadata"]["name"]
        for o in run.objects
        if o["kind"] == kind and o["metadata"]["name"].startswith(f"{SERVED}-")
    }


def _routed(run: Run) -> set[str]:
    """The qwen-l4 replicas the hub route sends to, as the ModelService publishes it."""
    service: Obj = run.one("ModelService", "chat")
    return {
        e["replica"]
        for e in service["status"].get("endpoints", [])
        if e.get("deployment") == SERVED
    }


def _cluster_routes(run: Run) -> set[str]:
    """The qwen-l4 replicas that have an HTTPRoute on their cluster."""
    found: set[str] = set()
    for o in run.objects:
        if o["kind"] != "Object":
            continue
        manifest = o["spec"]["forProvider"]["manifest"]
        replica = o["metadata"].get("labels", {}).get("modelplane.ai/replica", "")
        if manifest["kind"] == "HTTPRoute" and replica.startswith(f"{SERVED}-"):
            found.add(replica)
    return found


def test_an_image_bump_unroutes_the_old_replica_before_deleting_it(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "fleet", "catalog", "serving")
    running = modelplane("render", repo.root, "-o", "yaml")
    assert running.code == 0, running.err
    world = tmp_path / "world.yaml"
    world.write_text(running.out)
    (old,) = _names(Run(0, running.out, ""), "ModelReplica")
    lines = repo.text("serving/models.yaml").split("\n")
    # The second image in the file is qwen-l4's.
    at = [i for i, line in enumerate(lines) if OLD_IMAGE in line][1]
    lines[at] = lines[at].replace(OLD_IMAGE, NEW_IMAGE)
    repo.path("serving/models.yaml").write_text("\n".join(lines))

    argv = ("render", "--observed", world, repo.root, "-o", "yaml")
    runs = rounds(*argv, count=8)

    unrouted = None
    for n, run in enumerate(runs, start=1):
        routed = _routed(run)
        # Whatever the route lists runs, with its route on its cluster.
        assert routed <= _names(run, "ModelReplica"), n
        assert routed <= _cluster_routes(run), n
        if unrouted is None and old not in _names(run, "ModelEndpoint"):
            unrouted = n
            # The round its endpoint goes, the old replica still runs, unrouted.
            assert old in _names(run, "ModelReplica"), n
            assert old in _cluster_routes(run), n
            assert old not in routed, n
            retiring = run.one("ModelDeployment", SERVED)["status"]["retiring"]
            assert [r["replica"] for r in retiring] == [old]
    assert unrouted is not None
    deleted = next(n for n, run in enumerate(runs, 1) if old not in _names(run, "ModelReplica"))
    assert deleted == unrouted + 1
    final = runs[-1]
    assert final.code == 0, final.err
    (new,) = _names(final, "ModelReplica")
    assert _routed(final) == {new}
    assert "retiring" not in final.one("ModelDeployment", SERVED)["status"]

    # On a control plane: the round that deletes the old replica happens after the
    # ModelService's TTL requeue rewrote the route, which happens after the endpoint went.
    _, result = rendered(*argv, "--timeline")
    times = result.timeline.rounds
    assert times[deleted - 1] > times[unrouted - 1], times
