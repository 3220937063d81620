"""Preview a change to a running fleet: render, edit the output, render again.

The main example fleet runs kimi-k2 on both clusters (one LeaderWorkerSet on
prod-us-east, one LLMInferenceService on prod-eu-west), llama-8b twice on
prod-eu-west's L4s, and deepseek-r1 disaggregated on prod-us-east.
"""

from typing import Any

from .fleets import Fleet, find

Obj = dict[str, Any]
KIMI = "kimi-k2"
KIMI_EU = ("kimi-k2-7cfa0a1295", "prod-eu-west", 0)
KIMI_US = ("kimi-k2-cef100b736", "prod-us-east", 0)


def kimi(objects: list[Obj]) -> Obj:
    return find(objects, "ModelDeployment", KIMI)


def scheduled(fleet: Fleet, name: str = KIMI) -> tuple[str, str]:
    condition = fleet.condition("ModelDeployment", name, "ReplicasScheduled")
    return condition["status"], condition["reason"]


def objects_of(fleet: Fleet, replica: str) -> list[Obj]:
    return [
        o
        for o in fleet.all("Object")
        if o["metadata"].get("labels", {}).get("modelplane.ai/replica") == replica
    ]


def test_the_fleet_as_rendered(fleet: Fleet) -> None:
    assert fleet.placements(KIMI) == [KIMI_EU, KIMI_US]
    assert scheduled(fleet) == ("True", "AllReplicasScheduled")


def test_scaling_past_capacity_keeps_what_runs_and_says_why(fleet: Fleet) -> None:
    edited = fleet.edit(lambda objects: kimi(objects)["spec"].update(replicas=3))
    assert edited.result.ok, edited.result.errors
    assert edited.placements(KIMI) == [KIMI_EU, KIMI_US]
    assert scheduled(edited) == ("False", "InsufficientCapacity")
    trace = edited.one("ModelDeployment", KIMI)["status"]["matchTrace"]
    h100 = [t for t in trace if t.get("pool") == "h100"]
    assert {t["cluster"] for t in h100} == {"prod-eu-west", "prod-us-east"}
    assert all("not enough free devices" in t["message"] for t in h100)


def test_a_new_cluster_takes_the_next_replica(fleet: Fleet) -> None:
    def add_cluster_and_scale(objects: list[Obj]) -> None:
        kimi(objects)["spec"]["replicas"] = 3
        cluster = find(objects, "InferenceCluster", "prod-us-east")
        objects.append(
            {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "InferenceCluster",
                "metadata": {
                    "name": "prod-us-west",
                    "labels": {"tier": "production", "region": "us-west"},
                },
                "spec": {
                    **cluster["spec"],
                    "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 2}],
                },
            }
        )

    edited = fleet.edit(add_cluster_and_scale)
    assert edited.result.ok, edited.result.errors
    placements = edited.placements(KIMI)
    assert placements[:1] == [KIMI_EU] and KIMI_US in placements
    assert [p[1:] for p in placements if p not in (KIMI_EU, KIMI_US)] == [("prod-us-west", 0)]
    assert scheduled(edited) == ("True", "AllReplicasScheduled")
    assert edited.one("ModelDeployment", KIMI)["status"]["replicas"] == {"total": 3, "ready": 3}


def test_scale_down_drops_one_replica_and_its_workload(fleet: Fleet) -> None:
    edited = fleet.edit(lambda objects: kimi(objects)["spec"].update(replicas=1))
    assert edited.result.ok, edited.result.errors
    # Tied at one replica each, the later cluster name gives one up.
    assert edited.placements(KIMI) == [KIMI_EU]
    assert objects_of(edited, KIMI_US[0]) == []
    assert objects_of(edited, KIMI_EU[0]) == objects_of(fleet, KIMI_EU[0])


def test_a_selector_that_does_not_compile_changes_nothing_that_runs(fleet: Fleet) -> None:
    def break_selector(objects: list[Obj]) -> None:
        kimi(objects)["spec"]["nodeSelector"]["devices"][0]["selectors"][0]["cel"] = (
            "device.capacity[ >= 1"
        )

    edited = fleet.edit(break_selector)
    assert edited.result.ok, edited.result.errors
    assert scheduled(edited) == ("False", "InvalidNodeSelector")
    message = edited.condition("ModelDeployment", KIMI, "ReplicasScheduled")["message"]
    assert message.startswith("spec.nodeSelector.devices[0].selectors[0].cel:")
    for name, _, _ in (KIMI_EU, KIMI_US):
        assert edited.one("ModelReplica", name)["spec"] == fleet.one("ModelReplica", name)["spec"]
        assert objects_of(edited, name) == objects_of(fleet, name)
    # Both replicas still serve, so the deployment is still Ready.
    assert edited.condition("ModelDeployment", KIMI, "ReplicasReady")["status"] == "True"
    assert edited.condition("ModelDeployment", KIMI, "Ready")["status"] == "True"


def test_an_invalid_class_is_not_ready_and_its_cluster_says_so(fleet: Fleet) -> None:
    def break_class(objects: list[Obj]) -> None:
        gpu = find(objects, "InferenceClass", "h100-8x")["spec"]["devices"][0]
        gpu["attributes"]["cudaComputeCapability"] = {"version": "9.0"}

    edited = fleet.edit(break_class)
    assert edited.condition("InferenceClass", "h100-8x", "Valid")["status"] == "False"
    assert edited.condition("InferenceClass", "h100-8x", "Ready")["status"] == "False"
    for cluster in ("prod-us-east", "prod-eu-west"):
        assert edited.condition("InferenceCluster", cluster, "PoolsResolved")["status"] == "False"
        assert edited.condition("InferenceCluster", cluster, "Ready")["status"] == "False"
    # What runs keeps running: the pools stay as they were published.
    assert edited.placements(KIMI) == [KIMI_EU, KIMI_US]


def test_an_edit_that_matches_nothing_holds_every_replica(fleet: Fleet) -> None:
    def impossible(objects: list[Obj]) -> None:
        selector = kimi(objects)["spec"]["nodeSelector"]["devices"][0]["selectors"][0]
        selector["cel"] = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("1Ti")) >= 0'

    edited = fleet.edit(impossible)
    assert edited.placements(KIMI) == [KIMI_EU, KIMI_US]
    assert scheduled(edited) == ("False", "InsufficientCapacity")
    for name, _, _ in (KIMI_EU, KIMI_US):
        assert objects_of(edited, name) == objects_of(fleet, name)


def test_deleting_a_cluster_drops_what_ran_there(fleet: Fleet) -> None:
    edited = fleet.edit(
        lambda objects: objects.remove(find(objects, "InferenceCluster", "prod-eu-west"))
    )
    assert edited.result.ok, edited.result.errors
    assert edited.placements(KIMI) == [KIMI_US]
    # llama-8b fits only prod-eu-west's L4s: nothing is left for it.
    assert edited.placements("llama-8b") == []
    assert scheduled(edited, "llama-8b") == ("False", "InsufficientCapacity")
    assert not [
        o for o in edited.all("Object") if o["spec"]["providerConfigRef"]["name"] == "prod-eu-west"
    ]
    assert not [
        o
        for o in edited.objects
        if o["kind"] == "ClusterProviderConfig" and o["metadata"]["name"] == "prod-eu-west"
    ]


def test_a_priority_the_cluster_does_not_allow_moves_off_it_only_once_it_can(
    fleet: Fleet,
) -> None:
    """prod-us-east does not allow batch, so its replica must move; the fleet has no
    room for its replacement, so it keeps serving where it is (make before break) and
    the rollout says it is stalled, naming it."""

    def to_batch(objects: list[Obj]) -> None:
        kimi(objects)["spec"]["priority"] = "batch"
        # A class the control plane holds: one it does not is held (PriorityNotFound).
        objects.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "batch"},
                "value": 10,
            }
        )

    edited = fleet.edit(to_batch)
    assert edited.placements(KIMI) == [KIMI_EU, KIMI_US]
    assert edited.condition("ModelReplica", KIMI_US[0], "Serving")["status"] == "True"
    trace = edited.one("ModelDeployment", KIMI)["status"]["matchTrace"]
    (us,) = [t for t in trace if t["cluster"] == "prod-us-east"]
    assert "not in allowedPriorities" in us["message"]
    progress = edited.condition("ModelDeployment", KIMI, "Progressing")
    assert (progress["status"], progress["reason"]) == ("False", "RolloutStalled")
    assert (
        f"no room to place a replacement for {KIMI_US[0]}, which must move" in (progress["message"])
    )


def test_a_priority_naming_no_class_holds_every_replica(fleet: Fleet) -> None:
    """Rolled out, the replicas' pods would be refused at admission: what runs is kept,
    and the condition and a Warning name spec.priority."""
    edited = fleet.edit(lambda objects: kimi(objects)["spec"].update(priority="nope"))
    assert edited.placements(KIMI) == [KIMI_EU, KIMI_US]
    assert scheduled(edited) == ("False", "PriorityNotFound")
    message = edited.condition("ModelDeployment", KIMI, "ReplicasScheduled")["message"]
    assert message.startswith("spec.priority: no PriorityClass 'nope' exists")
    for name, _, _ in (KIMI_EU, KIMI_US):
        assert objects_of(edited, name) == objects_of(fleet, name)
    warned = [e for e in edited.result.events if e["reason"] == "PriorityNotFound"]
    assert warned and all(e["involvedObject"]["name"] == KIMI for e in warned)
    assert all(e["type"] == "Warning" and e["message"].endswith(message) for e in warned)


def test_an_unhealthy_workload_is_not_serving(fleet: Fleet) -> None:
    (workload,) = [
        o
        for o in objects_of(fleet, KIMI_US[0])
        if o["spec"]["forProvider"]["manifest"]["kind"] == "LeaderWorkerSet"
    ]

    def break_workload(objects: list[Obj]) -> None:
        obj = find(objects, "Object", workload["metadata"]["name"])
        obj["status"]["conditions"] = [
            {"type": "Ready", "status": "False", "reason": "Unavailable"},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
        ]
        obj["status"]["atProvider"]["manifest"]["status"] = {
            "conditions": [{"type": "Available", "status": "False"}]
        }

    edited = fleet.edit(break_workload)
    serving = edited.condition("ModelReplica", KIMI_US[0], "Serving")
    assert (serving["status"], serving["reason"]) == ("False", "WorkloadNotAvailable")
    status = edited.one("ModelDeployment", KIMI)["status"]
    assert status["replicas"] == {"total": 2, "ready": 1}
    ready = edited.condition("ModelDeployment", KIMI, "ReplicasReady")
    assert (ready["status"], ready["reason"]) == ("False", "ReplicasNotReady")


def test_a_broken_scheduling_template_keeps_the_cluster_running(fleet: Fleet) -> None:
    def break_template(objects: list[Obj]) -> None:
        cluster = find(objects, "InferenceCluster", "prod-us-east")
        cluster["spec"]["scheduling"]["defaultLabels"] = {"example.com/team": "{{ .Tenant }}"}

    edited = fleet.edit(break_template)
    configured = edited.condition("InferenceCluster", "prod-us-east", "SchedulingConfigured")
    assert (configured["status"], configured["reason"]) == ("False", "InvalidScheduling")
    accepted = edited.condition("ModelReplica", KIMI_US[0], "Accepted")
    assert (accepted["status"], accepted["reason"]) == ("False", "InvalidSchedulingTemplate")
    assert objects_of(edited, KIMI_US[0]) == objects_of(fleet, KIMI_US[0])
    # The deployment says so too, naming the replica, while the replica keeps serving.
    refused = edited.condition("ModelDeployment", KIMI, "ReplicasAccepted")
    assert (refused["status"], refused["reason"]) == ("False", "ReplicasNotAccepted")
    assert refused["message"].startswith(f"{KIMI_US[0]}: InvalidSchedulingTemplate: ")
    assert edited.one("ModelDeployment", KIMI)["status"]["replicas"] == {"total": 2, "ready": 2}


def test_an_ml_team_cannot_choose_its_own_queue(fleet: Fleet) -> None:
    """prod-us-east runs KAI with queue {{ .Namespace }}: a pod label naming another
    queue is overwritten by the platform's, and the replica says so, naming the key."""

    def sneak(objects: list[Obj]) -> None:
        labels = kimi(objects)["spec"]["workers"]["template"]["metadata"]["labels"]
        labels["kai.scheduler/queue"] = "vip"
        # The fleet has no room to surge: one replica at a time may restart.
        kimi(objects)["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 1}}

    edited = fleet.edit(sneak)
    assert edited.result.ok, edited.result.errors
    (lws,) = [
        o["spec"]["forProvider"]["manifest"]
        for o in objects_of(edited, KIMI_US[0])
        if o["spec"]["forProvider"]["manifest"]["kind"] == "LeaderWorkerSet"
    ]
    templates = lws["spec"]["leaderWorkerTemplate"]
    queues = {
        lws["metadata"]["labels"]["kai.scheduler/queue"],
        templates["leaderTemplate"]["metadata"]["labels"]["kai.scheduler/queue"],
        templates["workerTemplate"]["metadata"]["labels"]["kai.scheduler/queue"],
    }
    assert queues == {"ml-team-prod"}
    warnings = [
        e["message"]
        for e in edited.result.events
        if e["involvedObject"]["name"] == KIMI_US[0] and e["reason"] == "PlatformKeyOverridden"
    ]
    assert len(warnings) == 2
    assert all("metadata.labels[kai.scheduler/queue]" in message for message in warnings)


def test_a_pod_template_nested_too_deep_changes_nothing_that_runs(fleet: Fleet) -> None:
    """A team's pod template nested past what the functions decode (containers keep
    unknown fields, so the API server admits it) is refused on its own deployment, naming
    the field: nothing over-deep is composed, so every cluster's InferenceCluster, which
    reads every replica's Objects, stays as it was (design/deep-templates.md)."""
    deep: object = "x"
    for _ in range(24):
        deep = {"n": deep}

    def nest(objects: list[Obj]) -> None:
        engine = kimi(objects)["spec"]["workers"]["template"]["spec"]["containers"][0]
        engine["x-deep"] = deep

    edited = fleet.edit(nest)
    assert edited.result.ok, edited.result.errors
    assert scheduled(edited) == ("False", "InvalidSpec")
    # Level 17 of the pod spec: spec, containers, the container, x-deep and 13 more.
    field = "spec.workers.template.spec.containers[0].x-deep" + ".n" * 13
    message = edited.condition("ModelDeployment", KIMI, "ReplicasScheduled")["message"]
    assert message.startswith(f"{field}: nests deeper than 16 levels")
    warnings = [
        o
        for o in edited.result.events
        if o["involvedObject"]["name"] == KIMI
        and o["type"] == "Warning"
        and o["reason"] == "InvalidSpec"
    ]
    assert warnings and all(w["message"].endswith(message) for w in warnings)
    # What runs keeps running, exactly as it ran.
    assert edited.placements(KIMI) == [KIMI_EU, KIMI_US]
    for name, _, _ in (KIMI_EU, KIMI_US):
        assert edited.one("ModelReplica", name)["spec"] == fleet.one("ModelReplica", name)["spec"]
        assert objects_of(edited, name) == objects_of(fleet, name)
        assert edited.condition("ModelReplica", name, "Serving")["status"] == "True"
    assert edited.condition("ModelDeployment", KIMI, "ReplicasReady")["status"] == "True"
    # Every tenant's cluster is as healthy as before the edit.
    for cluster in ("prod-us-east", "prod-eu-west"):
        assert (
            edited.one("InferenceCluster", cluster)["status"]["conditions"]
            == (fleet.one("InferenceCluster", cluster)["status"]["conditions"])
        )
