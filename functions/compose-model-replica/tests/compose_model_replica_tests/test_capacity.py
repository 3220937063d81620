"""A replica whose pool has no node for it yet says it waits for capacity, not that
something failed; with nodes ready, not serving means what it always meant."""

from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import cluster, replica, role


def on_pool(ready: int | None, placeable: int = 4) -> dict[str, Any]:
    """Cluster `a` whose pool h100 the scheduler places on up to `placeable` nodes,
    `ready` of them reported ready (None: no capacity reported)."""
    obj = cluster(pools=(("h100", placeable),))
    if ready is not None:
        obj["status"]["capacity"] = {
            "pools": [{"name": "h100", "nodes": ready, "maxNodes": placeable}]
        }
    return obj


def serving(obj: dict[str, Any]) -> dict[str, Any]:
    req = request(
        replica(workers=role()),
        required={"inferencecluster": [obj], "priorityclasses": []},
    )
    got = as_dict(run(FunctionRunner(), req))
    return next(c for c in got["conditions"] if c["type"] == "Serving")


@pytest.mark.parametrize(
    ("ready", "reason", "says"),
    [
        (
            0,
            "WaitingForCapacity",
            "pool h100 has 0 of up to 4 nodes (as the cloud reports its size)",
        ),
        (
            2,
            "WaitingForCapacity",
            "pool h100 has 2 of up to 4 nodes (as the cloud reports its size)",
        ),
        (4, "WorkloadNotAvailable", "has not been observed yet"),
        (None, "WorkloadNotAvailable", "has not been observed yet"),
    ],
    ids=["no node yet", "some nodes", "every node ready", "no capacity reported"],
)
def test_not_serving_says_whether_it_waits_for_a_node(
    ready: int | None, reason: str, says: str
) -> None:
    got = serving(on_pool(ready))
    assert (got["status"], got["reason"]) == ("STATUS_CONDITION_FALSE", reason)
    assert says in got["message"]
