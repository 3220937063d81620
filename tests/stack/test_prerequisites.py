"""What both modes observe, for whom; and what an Observe Object says it found."""

from typing import Any

import pytest

from modelplane.conventions.schedulers import KAI, Coscheduling, Default, Kueue, Volcano
from modelplane.core.refs import ObjectRef, crd, device_class, priority_class
from modelplane.stack import Prerequisite, QueueUse, Scope, Seen, cluster_prerequisites, seen

LWS = crd("leaderworkersets.leaderworkerset.x-k8s.io")


def prerequisites(**given: Any) -> list[Prerequisite]:
    args: dict[str, Any] = {
        "kserve": False,
        "scheduler": Default(),
        "gangs": True,
        "gateway": None,
        "device_classes": (),
        "priorities": (),
        "queues": (),
    }
    return cluster_prerequisites(**(args | given))


def test_a_native_default_cluster_needs_lws_for_multi_node_replicas() -> None:
    assert prerequisites() == [Prerequisite(LWS, Scope.MULTI_NODE)]


def test_kserve_kueue_a_gateway_device_classes_and_priorities() -> None:
    found = prerequisites(
        kserve=True,
        scheduler=Kueue(workload_priority_classes=frozenset({"prod"})),
        gateway="eg",
        device_classes=["gpu.nvidia.com"],
        priorities=["prod", "batch"],
    )
    assert {(p.ref.kind, p.ref.name, p.scope) for p in found} == {
        ("CustomResourceDefinition", "llminferenceservices.serving.kserve.io", Scope.CLUSTER),
        ("CustomResourceDefinition", LWS.name, Scope.MULTI_NODE),
        ("CustomResourceDefinition", "localqueues.kueue.x-k8s.io", Scope.CLUSTER),
        ("CustomResourceDefinition", "gateways.gateway.networking.k8s.io", Scope.CLUSTER),
        ("CustomResourceDefinition", "httproutes.gateway.networking.k8s.io", Scope.CLUSTER),
        ("CustomResourceDefinition", "inferencepools.inference.networking.k8s.io", Scope.CLUSTER),
        ("GatewayClass", "eg", Scope.CLUSTER),
        ("DeviceClass", "gpu.nvidia.com", Scope.DEVICE_CLASS),
        ("PriorityClass", "prod", Scope.PRIORITY),
        ("PriorityClass", "batch", Scope.PRIORITY),
        ("WorkloadPriorityClass", "prod", Scope.PRIORITY),
    }


@pytest.mark.parametrize(
    ("scheduler", "gangs", "gang_crd"),
    [
        (Coscheduling(), True, "podgroups.scheduling.x-k8s.io"),
        (Coscheduling(), False, None),
        # KAI's podgrouper makes every KAI PodGroup; Modelplane composes none.
        (KAI(), True, None),
        (Volcano(lws_gang_scheduling=False), True, "podgroups.scheduling.volcano.sh"),
        (Volcano(), True, None),
    ],
)
def test_a_gang_crd_only_where_modelplane_composes_gangs(
    scheduler: Any, gangs: bool, gang_crd: str | None
) -> None:
    found = {p.ref.name for p in prerequisites(scheduler=scheduler, gangs=gangs)}
    assert (gang_crd in found) if gang_crd else not any("podgroups" in n for n in found)


def test_queues_by_who_uses_them() -> None:
    local = ObjectRef("kueue.x-k8s.io/v1beta2", "LocalQueue", "gpu", "mp-team-a")
    kai_team = ObjectRef("scheduling.run.ai/v2", "Queue", "team-a")
    kai_default = ObjectRef("scheduling.run.ai/v2", "Queue", "default-queue")
    mine = ObjectRef("scheduling.run.ai/v2", "Queue", "chat-1")
    found = prerequisites(
        queues=[
            QueueUse(local, "team-a"),
            QueueUse(kai_team, "team-a", per_namespace=True),
            QueueUse(kai_default, "team-a"),
            QueueUse(kai_default, "team-b"),
            QueueUse(mine, "team-a", per_replica=True),
        ]
    )
    assert [p for p in found if p.ref.kind != "CustomResourceDefinition"] == sorted(
        [
            Prerequisite(local, Scope.NAMESPACE, "team-a"),
            Prerequisite(kai_team, Scope.NAMESPACE, "team-a"),
            Prerequisite(kai_default, Scope.CLUSTER),
            Prerequisite(mine, Scope.REPLICA),
        ]
    )


def test_the_widest_scope_wins() -> None:
    found = prerequisites(
        priorities=["prod"], priority_refs=[priority_class("prod")], device_classes=["x"]
    )
    assert Prerequisite(priority_class("prod"), Scope.PRIORITY) in found
    assert Prerequisite(device_class("x"), Scope.DEVICE_CLASS) in found
    assert len(found) == len({p.ref for p in found})


def synced(status: str, message: str = "") -> dict[str, Any]:
    conditions: list[dict[str, str]] = [{"type": "Synced", "status": status, "message": message}]
    if status == "True":
        conditions.append({"type": "Ready", "status": "True"})
    return {"status": {"conditions": conditions}}


@pytest.mark.parametrize(
    ("observed", "state"),
    [
        (None, Seen.UNKNOWN),
        ({}, Seen.UNKNOWN),
        (synced("True"), Seen.PRESENT),
        (synced("False", "observe failed: external resource does not exist"), Seen.ABSENT),
        (
            synced("False", 'cannot get object: no matches for kind "Queue" in version "v2"'),
            Seen.ABSENT,
        ),
        (synced("False", "cannot get object: connection refused"), Seen.UNKNOWN),
        ({"status": "garbage"}, Seen.UNKNOWN),
    ],
)
def test_what_an_observe_object_found(observed: Any, state: Seen) -> None:
    assert seen(observed)[0] is state
