"""A Kueue cluster's queue changed under running replicas, previewed over their world.

Kueue's webhooks refuse to change the queue-name label of a Deployment or
LeaderWorkerSet that has ready replicas, and a refused update blocks every later
one. So, round by round, no workload the cluster reports ready is asked to change
its queue: it keeps the queue it runs with (a SchedulingLabelKept warning says
so) and still takes every other change; it moves once it has no ready replica
(as the simulation shows it while it rolls out that other change), and the
replicas placed after the change get the new queue from the start.
"""

from pathlib import Path

from .cli import NOT_CONVERGED, Fleet, Obj, Run, modelplane, rounds
from .manifests import h100_cluster, h100_model

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
TEAM_LABEL = "example.com/team"
SCHEDULING = """  scheduling:
    provider: Kueue
    queue: "{{ .Namespace }}-local"
"""


def _deployments(run: Run) -> dict[str, tuple[Obj, Obj]]:
    """Each replica's Deployment as composed, and as read back from the cluster in
    that round (empty before it exists), by replica."""
    return {
        o["metadata"]["labels"]["modelplane.ai/replica"]: (
            o["spec"]["forProvider"]["manifest"],
            o.get("status", {}).get("atProvider", {}).get("manifest") or {},
        )
        for o in run.objects
        if o["kind"] == "Object" and o["spec"]["forProvider"]["manifest"]["kind"] == "Deployment"
    }


def _labels(manifest: Obj) -> dict[str, str]:
    return manifest.get("metadata", {}).get("labels", {})


def _kept(run: Run) -> list[str]:
    return [
        o["message"]
        for o in run.objects
        if o["kind"] == "Event" and o["reason"] == "SchedulingLabelKept"
    ]


def test_a_queue_change_never_rewrites_the_queue_of_a_ready_workload(tmp_path: Path) -> None:
    repo = Fleet(tmp_path / "fleet", "catalog")
    cluster = h100_cluster("kueue-a", 2, spec=SCHEDULING)
    repo.path("fleet.yaml").write_text(cluster + h100_model("chat", "team-a", replicas=1))
    running = modelplane("render", repo.root, "-o", "yaml")
    assert running.code == 0, running.err
    world = tmp_path / "world.yaml"
    world.write_text(running.out)
    ((old, (composed, _)),) = _deployments(running).items()
    assert _labels(composed)[QUEUE_LABEL] == "team-a-local"

    # The platform moves the team to another queue and labels its workloads; the team
    # scales out.
    repo.replace("fleet.yaml", "{{ .Namespace }}-local", "{{ .Namespace }}-gpu")
    repo.replace(
        "fleet.yaml",
        "    provider: Kueue\n",
        f'    provider: Kueue\n    defaultLabels: {{{TEAM_LABEL}: "{{{{ .Namespace }}}}"}}\n',
    )
    repo.replace("fleet.yaml", "replicas: 1", "replicas: 2")
    runs = rounds("render", "--observed", world, repo.root, "-o", "yaml", count=8)
    assert runs[-1].code == 0, runs[-1].err

    for run in runs:
        assert run.code == 0 or NOT_CONVERGED in run.err, run.err
        for composed, read_back in _deployments(run).values():
            if read_back.get("status", {}).get("readyReplicas", 0) > 0:
                assert _labels(composed)[QUEUE_LABEL] == _labels(read_back)[QUEUE_LABEL]

    # Round 1: the running workload keeps its queue and still takes the new label.
    first = _deployments(runs[0])
    assert list(first) == [old]
    assert _labels(first[old][0])[QUEUE_LABEL] == "team-a-local"
    assert _labels(first[old][0])[TEAM_LABEL] == "team-a"
    (warned,) = _kept(runs[0])
    assert "spec.scheduling.queue" in warned
    assert f"keeps {QUEUE_LABEL}=team-a-local" in warned
    assert f"it takes {QUEUE_LABEL}=team-a-gpu once it has no ready replica" in warned

    # In the end the new replica started on the new queue, and the old one moved to it
    # while it had no ready replica, which Kueue allows.
    final = _deployments(runs[-1])
    (new,) = set(final) - {old}
    assert {r: _labels(final[r][0])[QUEUE_LABEL] for r in final} == {
        old: "team-a-gpu",
        new: "team-a-gpu",
    }
