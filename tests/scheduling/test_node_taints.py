"""A role tolerates exactly the taints of the pool it claims devices on."""

from typing import Any

from modelplane.scheduling import Origin

from .builders import cluster, declaring, deployment, h100, replica, run

Obj = dict[str, Any]

GPU_TAINT: Obj = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
MIG_TAINT: Obj = {"key": "nvidia.com/mig.config", "value": "all-1g.10gb", "effect": "NoExecute"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
MIG_TOLERATION = {
    "key": "nvidia.com/mig.config",
    "operator": "Equal",
    "value": "all-1g.10gb",
    "effect": "NoExecute",
}


def tainted(published: Obj, *taints: Obj) -> Obj:
    return {**published, "nodeTaints": list(taints)}


def test_a_claiming_role_tolerates_its_pools_taints_in_declared_order() -> None:
    decision = run(deployment(1), [cluster("a", tainted(h100(), GPU_TAINT, MIG_TAINT))])
    (workers,) = decision.replicas[0].roles
    assert workers.as_dict()["tolerations"] == [GPU_TOLERATION, MIG_TOLERATION]


def test_an_untainted_pool_gives_no_tolerations() -> None:
    decision = run(deployment(1), [cluster("a", h100())])
    (workers,) = decision.replicas[0].roles
    assert "tolerations" not in workers.as_dict()


def test_a_retained_replica_follows_its_class_taints() -> None:
    decision = run(
        deployment(1), [cluster("a", tainted(h100(), GPU_TAINT))], [replica("a", 0, serving=True)]
    )
    (kept,) = decision.replicas
    assert kept.origin is Origin.RETAINED
    assert kept.roles[0].as_dict()["tolerations"] == [GPU_TOLERATION]


def test_a_held_replica_keeps_the_tolerations_it_records() -> None:
    recorded = replica("a", 0)
    recorded["spec"]["workers"]["tolerations"] = [MIG_TOLERATION]
    decision = run(deployment(1), [declaring(cluster("a"), "h100")], [recorded])
    (held,) = decision.replicas
    assert held.origin is Origin.HELD
    assert held.roles[0].as_dict()["tolerations"] == [MIG_TOLERATION]
