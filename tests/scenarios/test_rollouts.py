"""Day-2 changes to a running fleet, round by round: rollouts and make-before-break moves.

Each scenario renders a fleet to its fixed point (the running world), edits the
sources as a user would, then renders the edit against that world with
`--rounds 1`, `--rounds 2`, ...: the world after each round. In the simulation a
workload whose manifest changed is not serving for one round, so every round is a
moment a user could look at the fleet. What serves is read from the clusters
(each replica's workload Objects Ready), not from what Modelplane reports.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .cli import Fleet, Obj, Run, modelplane, rounds
from .manifests import IMAGE, h100_cluster, h100_model

OLD_IMAGE, NEW_IMAGE = IMAGE, "vllm/vllm-openai:v0.8.0"
REVISION = "modelplane.ai/revision"


def _model(name: str, replicas: int, zone: str) -> str:
    selector = f"  clusterSelector: {{matchLabels: {{zone: {zone}}}}}\n"
    return h100_model(name, "ml", replicas=replicas, spec=selector)


def _fleet(tmp_path: Path, clusters: list[tuple[str, str, int]], replicas: int) -> Fleet:
    repo = Fleet(tmp_path / "fleet", "catalog")
    text = "".join(h100_cluster(n, k, labels={"zone": z}) for n, z, k in clusters)
    model = _model("chat", replicas, "a")
    repo.path("fleet.yaml").write_text(text + model)
    return repo


def _running(repo: Fleet, tmp_path: Path) -> Path:
    run = modelplane("render", repo.root, "-o", "yaml")
    assert run.code == 0, run.err
    world = tmp_path / "world.yaml"
    world.write_text(run.out)
    return world


def _as_run(world: Path) -> Run:
    """The running world `_running` rendered, read back rather than rendered again."""
    return Run(0, world.read_text(), "")


def _rounds(repo: Fleet, world: Path, count: int) -> list[Run]:
    return rounds("render", "--observed", world, repo.root, "-o", "yaml", count=count)


def _replicas(run: Run) -> list[Obj]:
    return sorted(
        (o for o in run.objects if o["kind"] == "ModelReplica"),
        key=lambda o: o["metadata"]["name"],
    )


def _serving_on_cluster(run: Run) -> set[str]:
    """Replicas whose every workload Object is Ready: what actually serves."""
    ready: dict[str, bool] = {}
    for o in run.objects:
        if o["kind"] != "Object":
            continue
        manifest = o["spec"]["forProvider"]["manifest"]
        if manifest["kind"] not in ("Deployment", "LeaderWorkerSet"):
            continue
        replica = o["metadata"]["labels"]["modelplane.ai/replica"]
        conditions = {c["type"]: c["status"] for c in o.get("status", {}).get("conditions", [])}
        ready[replica] = ready.get(replica, True) and conditions.get("Ready") == "True"
    return {name for name, ok in ready.items() if ok}


def _progress(run: Run) -> tuple[str, str]:
    found = run.condition("ModelDeployment", "chat", "Progressing")
    return found["status"], found["reason"]


def _edit(repo: Fleet, change: Callable[[Obj], None]) -> None:
    repo.edit("fleet.yaml", "ModelDeployment", "chat", change)


def test_an_image_bump_rolls_through_four_replicas_one_at_a_time(tmp_path: Path) -> None:
    """Four replicas filling a cluster with one spare node, default strategy (25%: at
    most one unavailable, one surge): never more than one of the four desired replicas
    down in any round, and every replica on the new image at the end."""
    repo = _fleet(tmp_path, [("east", "a", 5)], replicas=4)
    world = _running(repo, tmp_path)
    before = {o["metadata"]["name"] for o in _replicas(_as_run(world))}
    repo.replace("fleet.yaml", OLD_IMAGE, NEW_IMAGE)

    runs = _rounds(repo, world, 16)

    for n, run in enumerate(runs, start=1):
        serving = _serving_on_cluster(run)
        assert len(serving) >= 3, (n, sorted(serving))
        placed = _replicas(run)
        assert len(placed) <= 5, n  # four desired and one surge
    final = runs[-1]
    assert final.code == 0, final.err
    replicas = _replicas(final)
    assert len(replicas) == 4
    images = {o["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] for o in replicas}
    assert images == {NEW_IMAGE}
    status = final.one("ModelDeployment", "chat")["status"]
    assert status["updatedReplicas"] == 4
    assert status["replicas"] == {"total": 4, "ready": 4}
    assert _progress(final) == ("True", "RolloutComplete")
    assert len({o["metadata"]["annotations"][REVISION] for o in replicas}) == 1
    # The rollout was in flight in between: some round had a replica updating.
    assert any(_progress(run)[1] == "RollingUpdate" for run in runs)
    assert any(len(_serving_on_cluster(run)) == 3 for run in runs)
    # The surge replica took the spare node, and one old replica made way for it.
    assert len({o["metadata"]["name"] for o in replicas} - before) == 1


def test_a_full_fleet_updates_in_place_within_max_unavailable(tmp_path: Path) -> None:
    """No room to surge: replicas restart in place, maxUnavailable (here 2 of 4) at most."""
    repo = _fleet(tmp_path, [("east", "a", 4)], replicas=4)
    world = _running(repo, tmp_path)
    repo.replace("fleet.yaml", OLD_IMAGE, NEW_IMAGE)

    def two_at_a_time(deployment: Obj) -> None:
        deployment["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 2, "maxSurge": 0}}

    _edit(repo, two_at_a_time)

    runs = _rounds(repo, world, 12)

    down = [4 - len(_serving_on_cluster(run)) for run in runs]
    assert max(down) == 2, down
    final = runs[-1]
    assert final.code == 0, final.err
    names = [o["metadata"]["name"] for o in _replicas(final)]
    assert names == [o["metadata"]["name"] for o in _replicas(runs[0])]  # nothing moved
    assert final.one("ModelDeployment", "chat")["status"]["updatedReplicas"] == 4


def test_with_no_room_and_no_budget_the_rollout_stalls_and_says_why(tmp_path: Path) -> None:
    """One replica on a full cluster, default strategy: 25% of one is no replica down, and
    there is no room to surge. Nothing restarts; the deployment says it is stalled."""
    repo = _fleet(tmp_path, [("east", "a", 1)], replicas=1)
    world = _running(repo, tmp_path)
    repo.replace("fleet.yaml", OLD_IMAGE, NEW_IMAGE)

    (run,) = _rounds(repo, world, 1)

    assert _serving_on_cluster(run) == {o["metadata"]["name"] for o in _replicas(run)}
    (replica,) = _replicas(run)
    assert replica["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] == OLD_IMAGE
    progress = run.condition("ModelDeployment", "chat", "Progressing")
    assert (progress["status"], progress["reason"]) == ("False", "RolloutStalled")
    assert "at most 0 may be unavailable, with no room to surge" in progress["message"]
    assert run.code == 1


def test_a_selector_edit_keeps_the_old_replica_until_the_new_one_serves(
    tmp_path: Path,
) -> None:
    """The replica's cluster stops matching the clusterSelector: its replacement is
    placed on the newly selected cluster first, and the old one is removed only once
    the new one serves. In no round is the model down."""
    repo = _fleet(tmp_path, [("east", "a", 1), ("west", "b", 1)], replicas=1)
    world = _running(repo, tmp_path)
    (old,) = [o["metadata"]["name"] for o in _replicas(_as_run(world))]
    repo.replace("fleet.yaml", "matchLabels: {zone: a}", "matchLabels: {zone: b}")

    runs = _rounds(repo, world, 8)

    timeline: list[tuple[set[str], set[str]]] = []
    for run in runs:
        placed = {o["metadata"]["name"] for o in _replicas(run)}
        serving = _serving_on_cluster(run)
        timeline.append((placed, serving))
        assert serving, timeline  # never down
    (new,) = timeline[-1][0]
    assert new != old
    for placed, serving in timeline:
        if old not in placed:
            # The old replica left only after its replacement served.
            assert new in serving, timeline
    both = [run for run, (placed, _) in zip(runs, timeline, strict=True) if placed == {old, new}]
    assert both
    scheduled = both[0].condition("ModelDeployment", "chat", "ReplicasScheduled")
    assert scheduled["message"] == (
        "1 of 1 replicas scheduled across 2 clusters, and 1 more while a rollout replaces old ones"
    )
    final = runs[-1]
    assert final.code == 0, final.err
    (replica,) = _replicas(final)
    assert replica["spec"]["clusterName"] == "west"
    removed = [
        o["message"]
        for o in final.objects
        if o["kind"] == "Event" and o["reason"] == "ReplicaRemoved"
    ]
    assert any(f"Removed replica {old}" in m and "its replacement serves" in m for m in removed)


def test_a_selector_edit_with_no_room_keeps_the_running_replica(tmp_path: Path) -> None:
    """The newly selected cluster is full (another deployment's replica holds it): the
    running replica is not removed to make room for a change that cannot be placed."""
    repo = _fleet(tmp_path, [("east", "a", 1), ("west", "b", 1)], replicas=1)
    holder = _model("holder", 1, "b")
    repo.path("holder.yaml").write_text(holder)
    world = _running(repo, tmp_path)
    repo.replace("fleet.yaml", "matchLabels: {zone: a}", "matchLabels: {zone: b}")

    runs = _rounds(repo, world, 3)

    for run in runs:
        (replica,) = [o for o in _replicas(run) if o["spec"]["deploymentName"] == "chat"]
        assert replica["spec"]["clusterName"] == "east"
        assert replica["metadata"]["name"] in _serving_on_cluster(run)
    assert _progress(runs[-1]) == ("False", "RolloutStalled")


def test_scale_to_zero_and_back_through_the_fleet_scheduler(tmp_path: Path) -> None:
    """What KEDA does through the scale subresource: spec.replicas to 0 removes every
    replica at once (a scale down is not a rollout), and back to 2 places them again."""
    repo = _fleet(tmp_path, [("east", "a", 2)], replicas=2)
    world = _running(repo, tmp_path)
    repo.replace("fleet.yaml", "replicas: 2", "replicas: 0")

    (idle,) = _rounds(repo, world, 1)

    assert _replicas(idle) == []
    status = idle.one("ModelDeployment", "chat")["status"]
    assert status["replicas"] == {"total": 0, "ready": 0}
    assert status["selector"] == "modelplane.ai/deployment=chat"
    assert _progress(idle) == ("True", "RolloutComplete")
    world.write_text(idle.out)
    repo.replace("fleet.yaml", "replicas: 0", "replicas: 2")

    back = modelplane("render", "--observed", world, repo.root, "-o", "yaml")

    assert back.code == 0, back.err
    assert len(_replicas(back)) == 2
    assert len(_serving_on_cluster(back)) == 2
    status = back.one("ModelDeployment", "chat")["status"]
    assert status["replicas"] == {"total": 2, "ready": 2}
    assert status["updatedReplicas"] == 2


def _clusters(run: Run) -> list[str]:
    placements = run.one("ModelDeployment", "chat")["status"]["placements"]
    return sorted(p["cluster"] for p in placements)


def test_an_image_bump_with_room_surges_beside_each_replica(tmp_path: Path) -> None:
    """Two replicas spread over two clusters with room: the default surge of one lands
    on the cluster of the replica it replaces, so no round has a cluster hosting a
    replica it did not host before, and the diff moves nothing."""
    repo = _fleet(tmp_path, [("east", "a", 3), ("west", "a", 3)], replicas=2)
    world = _running(repo, tmp_path)
    start = _as_run(world)
    assert _clusters(start) == ["east", "west"]
    repo.replace("fleet.yaml", OLD_IMAGE, NEW_IMAGE)

    runs = _rounds(repo, world, 10)
    preview = modelplane("render", "--observed", world, repo.root, "-o", "diff")

    for n, run in enumerate(runs, start=1):
        assert set(_clusters(run)) == {"east", "west"}, (n, _clusters(run))
    final = runs[-1]
    assert final.code == 0, final.err
    assert _clusters(final) == ["east", "west"]
    assert _progress(final) == ("True", "RolloutComplete")
    assert preview.code == 0, preview.err
    assert preview.out.splitlines()[-1].endswith("0 placed, 0 moved, 2 replaced, 0 removed"), (
        preview.out[-300:]
    )


def test_an_image_bump_without_room_beside_surges_where_the_fleet_has_room(
    tmp_path: Path,
) -> None:
    """East has no spare node: its replica's surge goes where the fleet has room (west),
    as before; west's replica, with room beside it, does not move."""
    repo = _fleet(tmp_path, [("east", "a", 1), ("west", "a", 3)], replicas=2)
    world = _running(repo, tmp_path)
    assert _clusters(_as_run(world)) == ["east", "west"]
    repo.replace("fleet.yaml", OLD_IMAGE, NEW_IMAGE)

    final = modelplane("render", "--observed", world, repo.root, "-o", "yaml")
    preview = modelplane("render", "--observed", world, repo.root, "-o", "diff")

    assert final.code == 0, final.err
    assert _progress(final) == ("True", "RolloutComplete")
    assert _clusters(final) == ["west", "west"]
    assert "replicas: 0 placed, 1 moved, " in preview.out.splitlines()[-1]


def _claim_specs(run: Run) -> dict[str, Obj]:
    """Each ResourceClaimTemplate's spec on the workload clusters, by its Object's name."""
    return {
        o["metadata"]["name"]: o["spec"]["forProvider"]["manifest"]["spec"]
        for o in run.objects
        if o["kind"] == "Object"
        and o["spec"]["forProvider"]["manifest"]["kind"] == "ResourceClaimTemplate"
    }


def test_a_device_change_replaces_replicas_instead_of_updating_them_in_place(
    tmp_path: Path,
) -> None:
    """No room to surge, and the device request changes: a ResourceClaimTemplate's spec
    is immutable on the cluster, so each replica is replaced within maxUnavailable (its
    replacement under a name no existing replica has), never updated in place: no claim
    template Object keeps its name with another spec from one round to the next."""
    repo = _fleet(tmp_path, [("east", "a", 4)], replicas=4)
    world = _running(repo, tmp_path)
    repo.replace("fleet.yaml", 'quantity("79Gi")', 'quantity("70Gi")')

    def two_at_a_time(deployment: Obj) -> None:
        deployment["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 2, "maxSurge": 0}}

    _edit(repo, two_at_a_time)

    runs = _rounds(repo, world, 12)

    previous = _claim_specs(_as_run(world))
    for n, run in enumerate(runs, start=1):
        assert 4 - len(_serving_on_cluster(run)) <= 2, n
        claims = _claim_specs(run)
        for name in claims.keys() & previous.keys():
            assert claims[name] == previous[name], (n, name)
        previous = claims
    final = runs[-1]
    assert final.code == 0, final.err
    replicas = _replicas(final)
    assert len(replicas) == 4
    selectors = {
        request["selectors"][0]["cel"]
        for o in replicas
        for request in o["spec"]["workers"]["deviceRequests"]
    }
    assert selectors == {
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("70Gi")) >= 0'
    }
    assert _progress(final) == ("True", "RolloutComplete")
    removed = [
        o["message"]
        for o in final.objects
        if o["kind"] == "Event" and o["reason"] == "ReplicaRemoved"
    ]
    assert any("its workers device requests changed" in m for m in removed), removed
    assert not any(o["kind"] == "Event" and o["reason"] == "ReplicaUpdated" for o in final.objects)
