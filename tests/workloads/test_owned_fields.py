"""A pod template's own routes to GPUs, around the replica's DRA claim, are refused,
naming the field: a device-plugin resource, a claim of its own, the runtime's
device variable."""

from typing import Any

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.workloads import render_replica

from .inputs import read_cluster, read_replica


@pytest.mark.parametrize(
    ("template", "field"),
    [
        (
            {
                "spec": {
                    "containers": [
                        {"name": "engine", "resources": {"limits": {"nvidia.com/gpu": 8}}}
                    ]
                }
            },
            "spec.workers.template.spec.containers[0].resources.limits[nvidia.com/gpu]",
        ),
        (
            {
                "spec": {
                    "containers": [{"name": "engine"}],
                    "initContainers": [
                        {"name": "warm", "resources": {"requests": {"nvidia.com/gpu": 1}}}
                    ],
                }
            },
            "spec.workers.template.spec.initContainers[0].resources.requests[nvidia.com/gpu]",
        ),
        (
            {
                "spec": {
                    "containers": [
                        {"name": "engine", "resources": {"limits": {"nvidia.com/mig-1g.10gb": 1}}}
                    ]
                }
            },
            "spec.workers.template.spec.containers[0].resources.limits[nvidia.com/mig-1g.10gb]",
        ),
        (
            {
                "spec": {
                    "containers": [
                        {"name": "engine"},
                        {
                            "name": "side",
                            "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
                        },
                    ]
                }
            },
            "spec.workers.template.spec.containers[1].env[0].name",
        ),
        (
            {
                "spec": {
                    "containers": [{"name": "engine"}],
                    "initContainers": [
                        {
                            "name": "warm",
                            "env": [
                                {"name": "A", "value": "1"},
                                {"name": "NVIDIA_VISIBLE_DEVICES", "value": "0"},
                            ],
                        }
                    ],
                }
            },
            "spec.workers.template.spec.initContainers[0].env[1].name",
        ),
        (
            {
                "spec": {
                    "containers": [{"name": "engine", "resources": {"claims": [{"name": "x"}]}}]
                }
            },
            "spec.workers.template.spec.containers[0].resources.claims",
        ),
    ],
)
def test_a_route_to_gpus_around_the_claim_is_refused(
    build: Any, template: dict[str, Any], field: str
) -> None:
    obj = build.replica(workers=build.role(template=template))
    with pytest.raises(InvalidInputError) as caught:
        render_replica(read_replica(obj), read_cluster(build.cluster()))
    assert caught.value.issues[0].path == field


def test_an_rdma_nic_the_device_plugin_advertises_stays_the_teams(build: Any) -> None:
    """The Network Operator's NICs are `nvidia.com/` too, and a pool's Synthetic devices
    stand for them: the template requests them itself."""
    nic = {"limits": {"nvidia.com/hostdev": 8}, "requests": {"nvidia.com/hostdev": 8}}
    template = {"spec": {"containers": [{"name": "engine", "resources": nic}]}}
    obj = build.replica(workers=build.role(template=template))
    rendered = render_replica(read_replica(obj), read_cluster(build.cluster())).objects()
    assert "nvidia.com/hostdev" in repr([o.manifest for o in rendered])
