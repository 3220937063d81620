"""At fleet scale the deployment's status stays bounded and its condition sums up why."""

import json
from typing import Any

from compose_model_deployment.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .objects import cluster, deployment

STATUS_LIMIT = 256 * 1024


def _cluster(index: int) -> dict[str, Any]:
    """Too small for 8 pipeline stages, on one of 60 pool names, so rejections differ."""
    obj = cluster(f"c{index:05d}", 1 + index % 7)
    pool = f"h100-{index % 60}"
    obj["spec"]["nodePools"][0]["name"] = pool
    obj["status"]["gpuPools"][0]["name"] = pool
    return obj


def test_ten_thousand_clusters_give_a_bounded_status_and_a_histogram() -> None:
    fleet = [_cluster(i) for i in range(10_000)]
    # Past MAX_REPLICA_LISTS clusters listed, every replica comes in one list.
    req = request(
        deployment(2, pipeline=8),
        required={"inferenceclusters": fleet, "modelreplicas": [], "priorityclasses": []},
    )
    got = as_dict(run(FunctionRunner(), req))
    status = got["desired"]["composite"]["resource"]["status"]
    assert len(json.dumps(status)) < STATUS_LIMIT
    trace = status["matchTrace"]
    # Every cluster is full for the same reason: one entry for all of them.
    assert trace[0] == {
        "cluster": "c00000",
        "clusters": 10_000,
        "clusterNames": [f"c{i:05d}" for i in range(10)],
        "reason": "InsufficientCapacity",
        "message": "not enough free capacity for a replica",
    }
    # 60 pool names x 7 sizes are 420 causes on pools: the cap keeps 49 of them.
    assert len(trace) == 50
    omitted = status["matchTraceOmitted"]
    assert omitted["entries"] == 420 - 49
    kept = sum(e.get("clusters", 1) for e in trace[1:])
    assert omitted["rejections"] + kept == 10_000
    assert omitted["reasons"] == {"InsufficientCapacity": omitted["rejections"]}
    (scheduled, *_) = got["conditions"]
    assert scheduled["message"] == (
        "0 of 2 replicas scheduled: no room for more on the 10000 eligible clusters; "
        "0/10000 clusters available: 10000 InsufficientCapacity"
    )
