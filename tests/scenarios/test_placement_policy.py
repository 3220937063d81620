"""Placement policy previewed through `modelplane render`: spread constraints.

The main example fleet runs llama-8b twice on prod-eu-west's L4s (the only L4s in
the fleet). Each scenario adds prod-us-west, a cluster with L4s of its own, and
edits llama-8b's placement the way a team would.
"""

from typing import Any

from modelplane_cli.schema import ManifestValidator

from .fleets import Fleet, find
from .test_examples import assert_valid

Obj = dict[str, Any]
LLAMA = "llama-8b"
EU = "prod-eu-west"
WEST = "prod-us-west"


def add_west(objects: list[Obj], l4_nodes: int) -> None:
    east = find(objects, "InferenceCluster", "prod-us-east")
    objects.append(
        {
            "apiVersion": east["apiVersion"],
            "kind": "InferenceCluster",
            "metadata": {"name": WEST, "labels": {"tier": "production", "region": "us-west"}},
            "spec": {
                **east["spec"],
                "nodePools": [{"name": "l4", "className": "l4-1x", "nodeCount": l4_nodes}],
            },
        }
    )


def hosts(fleet: Fleet, deployment: str) -> list[str]:
    return sorted(cluster for _, cluster, _ in fleet.placements(deployment))


def test_do_not_schedule_by_region_leaves_a_replica_unplaced_rather_than_pile_up(
    fleet: Fleet, manifest_validator: ManifestValidator
) -> None:
    def spread_and_scale(objects: list[Obj]) -> None:
        add_west(objects, l4_nodes=1)
        spec = find(objects, "ModelDeployment", LLAMA)["spec"]
        spec["replicas"] = 4
        spec["placement"] = {
            "spreadConstraints": [
                {"topologyKey": "region", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}
            ]
        }

    edited = fleet.edit(spread_and_scale)
    assert edited.result.converged, edited.result.errors
    assert_valid(edited, manifest_validator)
    # eu-west keeps its two; us-west's one L4 takes the third; a fourth on eu-west would
    # make eu-west hold 3 against us-west's 1, beyond maxSkew 1.
    assert hosts(edited, LLAMA) == [EU, EU, WEST]
    condition = edited.condition("ModelDeployment", LLAMA, "ReplicasScheduled")
    assert (condition["status"], condition["reason"]) == ("False", "InsufficientCapacity")
    assert "within the spread constraints" in condition["message"]
    trace = edited.one("ModelDeployment", LLAMA)["status"]["matchTrace"]
    eu = [t for t in trace if t["cluster"] == EU and "pool" not in t]
    assert [t["reason"] for t in eu] == ["SpreadConstraint"]
    assert "region=eu-west" in eu[0]["message"]


def test_without_the_constraint_the_same_edit_piles_onto_one_region(fleet: Fleet) -> None:
    def scale(objects: list[Obj]) -> None:
        add_west(objects, l4_nodes=1)
        find(objects, "ModelDeployment", LLAMA)["spec"]["replicas"] = 4

    edited = fleet.edit(scale)
    assert edited.result.converged, edited.result.errors
    assert hosts(edited, LLAMA) == [EU, EU, EU, WEST]


def test_one_replica_per_cluster_by_the_implicit_cluster_label(fleet: Fleet) -> None:
    def one_per_cluster(objects: list[Obj]) -> None:
        add_west(objects, l4_nodes=4)
        spec = find(objects, "ModelDeployment", LLAMA)["spec"]
        spec["replicas"] = 3
        spec["placement"] = {
            "spreadConstraints": [
                {
                    "topologyKey": "modelplane.ai/cluster",
                    "maxSkew": 1,
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ]
        }

    edited = fleet.edit(one_per_cluster)
    assert edited.result.converged, edited.result.errors
    assert hosts(edited, LLAMA) == [EU, EU, WEST]
    events = [e["message"] for e in edited.result.events if e["reason"] == "ReplicaPlaced"]
    assert any("spread: modelplane.ai/cluster=prod-us-west holds 0" in m for m in events), events


def test_a_deployment_kserve_cannot_run_moves_to_a_native_cluster_make_before_break(
    fleet: Fleet, manifest_validator: ManifestValidator
) -> None:
    """llama-8b drops spec.model.uri: prod-eu-west (KServe) cannot download its weights,
    so its replicas move to prod-us-west (Native), never serving fewer on the way."""

    def drop_uri(objects: list[Obj]) -> None:
        add_west(objects, l4_nodes=4)
        spec = find(objects, "ModelDeployment", LLAMA)["spec"]
        spec["model"] = {"name": spec["model"].get("name", LLAMA)}

    flight = fleet.edit_rounds(drop_uri, 7)
    for rounds, in_flight in enumerate(flight, start=1):
        assert serving_replicas(in_flight, LLAMA) >= 2, rounds
    # Converged within the rounds looked at, the last is the whole render.
    done = flight[-1] if flight[-1].result.converged else fleet.edit(drop_uri)
    assert done.result.converged, done.result.errors
    assert_valid(done, manifest_validator)
    assert hosts(done, LLAMA) == [WEST, WEST]
    removed = [e["message"] for e in done.result.events if e["reason"] == "ReplicaRemoved"]
    assert removed and all("its backend is KServe" in m for m in removed), removed
    scheduled = done.condition("ModelDeployment", LLAMA, "ReplicasScheduled")
    assert scheduled["status"] == "True"


def serving_replicas(fleet: Fleet, deployment: str) -> int:
    return sum(
        1
        for o in fleet.all("ModelReplica")
        if o["spec"]["deploymentName"] == deployment
        and any(
            c["type"] == "Serving" and c["status"] == "True"
            for c in o.get("status", {}).get("conditions", [])
        )
    )


def _embedder(replicas: int) -> Obj:
    """A batch embedding model at KAI's preemptible class `train`, one L4 per replica."""
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "embedder", "namespace": "ml-team-prod"},
        "spec": {
            "replicas": replicas,
            "priority": "train",
            "model": {"uri": "hf://BAAI/bge-large-en-v1.5"},
            "nodeSelector": {
                "devices": [
                    {
                        "name": "gpu",
                        "count": 1,
                        "selectors": [
                            {
                                "cel": 'device.attributes["gpu.nvidia.com"].architecture'
                                ' == "Ada Lovelace"'
                            }
                        ],
                    }
                ]
            },
            "workers": {
                "count": 1,
                "template": {
                    "spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.7.3"}]}
                },
            },
        },
    }


def test_a_higher_priority_scale_up_preempts_serving_batch_replicas(
    fleet: Fleet, manifest_validator: ManifestValidator
) -> None:
    """prod-eu-west allows preemption; an embedder at `train` (50) fills its six free L4s.
    llama-8b (`inference`, 125) scales to 4: it preempts two embedder replicas, which
    wait (no other cluster has L4s) with reason Preempted."""

    def fill_l4s(objects: list[Obj]) -> None:
        eu = find(objects, "InferenceCluster", EU)
        eu["spec"]["scheduling"]["preemption"] = "LowerPriority"
        objects.append(_embedder(6))

    full = fleet.edit(fill_l4s)
    assert full.result.converged, full.result.errors
    assert hosts(full, "embedder") == [EU] * 6
    assert serving_replicas(full, "embedder") == 6

    def scale_llama(objects: list[Obj]) -> None:
        find(objects, "ModelDeployment", LLAMA)["spec"]["replicas"] = 4

    first = full.edit(scale_llama, rounds=1)
    preempting = [e["message"] for e in first.result.events if e["reason"] == "Preempting"]
    assert len(preempting) == 2, preempting
    # Until the preemptors are composed, every embedder replica still runs.
    assert len(hosts(first, "embedder")) == 6
    # The preemptor's status says what each new replica displaces.
    preempts = first.one("ModelDeployment", LLAMA)["status"]["preemptions"]
    assert {p["cluster"] for p in preempts} == {EU}
    named = [v for p in preempts for v in p["preempts"]]
    victims = set(named)
    assert len(victims) == 2 and all("of ModelDeployment embedder" in v for v in victims)
    # Each victim is named by one preemptor, not by every replica placed after it.
    assert len(named) == len(victims)

    # Once the preemptors are composed, the victims' status says who displaced them.
    second = full.edit(scale_llama, rounds=2)
    displaced = second.one("ModelDeployment", "embedder")["status"]["preemptions"]
    assert len(displaced) == 2
    assert all("of ModelDeployment llama-8b" in p["preemptedBy"] for p in displaced)
    assert {f"replica {p['replica']} of ModelDeployment embedder" for p in displaced} == victims

    done = full.edit(scale_llama)
    assert done.result.converged, done.result.errors
    assert_valid(done, manifest_validator)
    assert hosts(done, LLAMA) == [EU] * 4
    assert hosts(done, "embedder") == [EU] * 4
    condition = done.condition("ModelDeployment", "embedder", "ReplicasScheduled")
    assert (condition["status"], condition["reason"]) == ("False", "Preempted")
    preempted = [
        e["message"]
        for e in done.result.events
        if e["reason"] == "Preempted" and "was preempted by" in e["message"]
    ]
    assert len(preempted) == 2 and all("by replica llama-8b-" in m for m in preempted)
    assert "4 of 6 replicas scheduled: preempted" in condition["message"]
