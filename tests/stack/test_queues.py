"""GPU quota and usage as each scheduler's queue object reports them."""

from typing import Any

import pytest

from modelplane.core.refs import ObjectRef
from modelplane.stack.queues import QueueQuota, queue_provider, queue_quota, quota_parent

KAI = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue"}
VOLCANO = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue"}
CLUSTER_QUEUE = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue"}


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        (KAI, None),
        ({**KAI, "spec": {"resources": {"gpu": {"quota": -1}}}}, QueueQuota(None, 0)),
        (
            {
                **KAI,
                "spec": {"resources": {"gpu": {"quota": -1}}},
                "status": {"allocated": {"nvidia.com/gpu": 3}},
            },
            QueueQuota(None, 3),
        ),
        (
            {
                **KAI,
                "spec": {"resources": {"gpu": {"quota": 16}}},
                "status": {
                    "allocated": {"nvidia.com/gpu": "12"},
                    "allocatedNonPreemptible": {"nvidia.com/gpu": "4"},
                },
            },
            QueueQuota(16, 4),
        ),
        ({**KAI, "spec": {"resources": {"gpu": {"quota": 8}}}}, QueueQuota(8, 0)),
        (
            {
                **VOLCANO,
                "spec": {"capability": {"nvidia.com/gpu": "32"}, "deserved": {"nvidia.com/gpu": 8}},
            },
            QueueQuota(32, 0),
        ),
        (
            {
                **VOLCANO,
                "spec": {"deserved": {"nvidia.com/gpu": 8}},
                "status": {"allocated": {"nvidia.com/gpu": "1k"}},
            },
            QueueQuota(8, 1000),
        ),
        (
            {
                **CLUSTER_QUEUE,
                "spec": {
                    "resourceGroups": [
                        {
                            "flavors": [
                                {
                                    "name": "a",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": 64},
                                        {"name": "nvidia.com/gpu", "nominalQuota": 8},
                                    ],
                                },
                                {
                                    "name": "b",
                                    "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}],
                                },
                            ]
                        }
                    ]
                },
                "status": {
                    "flavorsReservation": [
                        {"name": "a", "resources": [{"name": "nvidia.com/gpu", "total": "6"}]}
                    ]
                },
            },
            QueueQuota(16, 6),
        ),
        ({"apiVersion": "v1", "kind": "ConfigMap", "spec": {"capability": {"gpu": 1}}}, None),
    ],
    ids=[
        "KAI, nothing reported",
        "KAI, unlimited and no usage",
        "KAI, unlimited",
        "KAI, only non-preemptible usage counts",
        "KAI, quota and no usage yet",
        "Volcano capability",
        "Volcano deserved",
        "Kueue ClusterQueue, GPU flavors summed",
        "not a queue",
    ],
)
def test_queue_quota(manifest: dict[str, Any], expected: QueueQuota | None) -> None:
    assert queue_quota(manifest) == expected


@pytest.mark.parametrize(
    ("quota", "expected"),
    [
        # The CRD's quota is a number in fractions of a GPU: whole GPUs fit its floor.
        (2.5, 2),
        (0.7, 0),
        (8.0, 8),
        # Only exactly -1 is unlimited (KAI's UnlimitedResourceQuantity); KAI admits
        # nothing non-preemptible under any other negative quota.
        (-1, None),
        (-1.0, None),
        (-0.5, 0),
        (-2, 0),
        # What cannot be read is taken as no quota, never as unlimited.
        ("lots", 0),
        (True, 0),
        ({"gpu": 2}, 0),
    ],
)
def test_a_kai_quota_is_whole_gpus_and_unlimited_only_at_minus_one(
    quota: object, expected: int | None
) -> None:
    manifest = {
        **KAI,
        "spec": {"resources": {"gpu": {"quota": quota}}},
        "status": {"allocatedNonPreemptible": {"nvidia.com/gpu": "2"}},
    }
    assert queue_quota(manifest) == QueueQuota(expected, 2)


def test_a_local_queue_names_its_cluster_queue() -> None:
    local = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue"}
    assert quota_parent({**local, "spec": {"clusterQueue": "gpus"}}) == ObjectRef(
        "kueue.x-k8s.io/v1beta2", "ClusterQueue", "gpus"
    )
    assert quota_parent({**local, "spec": {}}) is None
    assert quota_parent({**KAI, "spec": {"clusterQueue": "gpus"}}) is None
    assert quota_parent({"kind": "LocalQueue", "spec": {"clusterQueue": "gpus"}}) is None


@pytest.mark.parametrize(
    ("quantity", "quota", "used"),
    [
        ("1T", 10**12, 10**12),
        ("1Ti", 2**40, 2**40),
        ("500m", 0, 1),
        ("2500m", 2, 3),
        ("2e3", 2000, 2000),
        ("1.5k", 1500, 1500),
        ("8", 8, 8),
    ],
)
def test_every_quantity_form_reads_in_queue_quota(quantity: str, quota: int, used: int) -> None:
    """One quantity parser: every Kubernetes form. A replica takes whole devices, so
    a quota is rounded down (half a GPU of quota admits none) and usage up."""
    kai = {
        **KAI,
        "spec": {"resources": {"gpu": {"quota": quantity}}},
        "status": {"allocatedNonPreemptible": {"nvidia.com/gpu": quantity}},
    }
    assert queue_quota(kai) == QueueQuota(quota, used)
    volcano = {
        **VOLCANO,
        "spec": {"capability": {"nvidia.com/gpu": quantity}},
        "status": {"allocated": {"nvidia.com/gpu": quantity}},
    }
    assert queue_quota(volcano) == QueueQuota(quota, used)
    flavors = [{"resources": [{"name": "nvidia.com/gpu", "nominalQuota": quantity}]}]
    reserved = [{"resources": [{"name": "nvidia.com/gpu", "total": quantity}]}]
    kueue = {
        **CLUSTER_QUEUE,
        "spec": {"resourceGroups": [{"flavors": flavors}]},
        "status": {"flavorsReservation": reserved},
    }
    assert queue_quota(kueue) == QueueQuota(quota, used)


def test_the_queue_provider_is_the_scheduler_owning_the_group() -> None:
    assert queue_provider(KAI) == "KAI"
    assert queue_provider(VOLCANO) == "Volcano"
    assert queue_provider(CLUSTER_QUEUE) == "Kueue"
    assert queue_provider({"apiVersion": "v1", "kind": "ConfigMap"}) is None
