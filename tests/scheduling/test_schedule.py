"""Scenario table: the fleet scheduler end to end, with the fake selector engine."""

from dataclasses import dataclass, field

import pytest

from modelplane.core.vocabulary import Reason

from .builders import (
    HOPPER,
    Obj,
    claim,
    cluster,
    deployment,
    gpu,
    h100,
    l4,
    nic,
    placements,
    pool,
    replica,
    request,
    role,
    run,
)


@dataclass
class Case:
    id: str
    dep: Obj
    clusters: list[Obj]
    expect: list[str]
    reason: str = Reason.ALL_SCHEDULED
    existing: list[Obj] = field(default_factory=list[Obj])
    removed: list[str] = field(default_factory=list[str])
    trace: list[str] = field(default_factory=list[str])


IB_NODE = pool("ib", 1, gpu(8), nic(8))
PLAIN_NODE = pool("plain", 1, gpu(8))
NEEDS_IB = role(HOPPER, request("nic", 8, "link == infiniband"))

CASES = [
    Case(
        "spread across clusters first",
        deployment(3),
        [cluster("c", h100()), cluster("a", h100()), cluster("b", h100())],
        ["a/0:h100", "b/0:h100", "c/0:h100"],
    ),
    Case(
        "pack only when capacity forces it",
        deployment(4),
        [cluster("a", h100(nodes=4)), cluster("b", h100(nodes=1))],
        ["a/0:h100", "a/1:h100", "a/2:h100", "b/0:h100"],
    ),
    Case(
        "capacity exhaustion places what fits",
        deployment(5),
        [cluster("a", h100(nodes=2)), cluster("b", h100(nodes=1))],
        ["a/0:h100", "a/1:h100", "b/0:h100"],
        Reason.INSUFFICIENT_CAPACITY,
        trace=[
            "cluster a: not enough free capacity for a replica (it already hosts 2",
            "cluster a pool h100: not enough free devices: needs 1 pod of {gpu 8}; "
            "no free devices on its 2 nodes",
        ],
    ),
    Case(
        "other deployments' replicas are charged",
        deployment(3),
        [cluster("a", h100(nodes=2)), cluster("b", h100(nodes=2))],
        ["a/0:h100", "b/0:h100", "b/1:h100"],
        existing=[replica("a", 0, deployment_name="other")],
    ),
    Case(
        "same name in another namespace is another deployment",
        deployment(2),
        [cluster("a", h100(nodes=1)), cluster("b", h100(nodes=1))],
        ["b/0:h100"],
        Reason.INSUFFICIENT_CAPACITY,
        existing=[replica("a", 0, namespace="elsewhere")],
    ),
    Case(
        "devices are charged, so small workers share a node",
        deployment(5, request("gpu", 2, "arch == Hopper")),
        [cluster("a", h100(nodes=1))],
        ["a/0:h100", "a/1:h100", "a/2:h100"],
        Reason.INSUFFICIENT_CAPACITY,
        existing=[replica("a", 0, "h100", claim("gpu", 2), deployment_name="other")],
        trace=["needs 1 pod of {gpu 2}; no free devices on its 1 node"],
    ),
    Case(
        "a multi-node worker takes a pod per node",
        deployment(2, workers=2, topology={"pipeline": 2, "tensor": 8}),
        [cluster("a", h100(nodes=5))],
        ["a/0:h100"],
        Reason.INSUFFICIENT_CAPACITY,
        trace=["needs 4 pods of {gpu 8}; free: 1 node with gpu 8/8"],
    ),
    Case(
        "retained replicas stay put while what they claim is what the deployment asks",
        deployment(2, request("gpu", 8, "capacity.memory >= 40")),
        [cluster("a", h100()), cluster("b", h100()), cluster("c", h100())],
        ["a/0:h100", "c/3:h100"],
        existing=[replica("c", 3, "h100", claim("gpu", 8, "capacity.memory >= 40"))],
    ),
    Case(
        # A ResourceClaimTemplate's spec is immutable: replaced, under a new name.
        "a device selector edit replaces a replica, though its pool still matches",
        deployment(2, request("gpu", 8, "capacity.memory >= 40")),
        [cluster("a", h100()), cluster("b", h100()), cluster("c", h100())],
        ["a/0:h100", "b/0:h100"],
        existing=[replica("c", 3)],
        removed=["model-c-3: its workers device requests changed, which its cluster cannot"],
    ),
    Case(
        "a replica whose pinned pool stops matching is re-placed",
        deployment(1),
        [cluster("a", l4(), h100())],
        ["a/1:h100"],  # a new name: the old one exists until it is deleted
        existing=[replica("a", 0, "l4", claim("gpu", 1))],
        removed=["model-a-0: its pool l4 no longer matches workers"],
    ),
    Case(
        "a replica whose cluster is gone is replaced",
        deployment(1),
        [cluster("a", h100())],
        ["a/0:h100"],
        existing=[replica("gone", 0)],
        removed=["model-gone-0: cluster no longer exists"],
    ),
    Case(
        "a replica whose cluster is no longer selected is re-placed",
        deployment(1, cluster_selector={"matchLabels": {"tier": "prod"}}),
        [
            cluster("a", h100(), labels={"tier": "dev"}),
            cluster("b", h100(), labels={"tier": "prod"}),
        ],
        ["b/0:h100"],
        existing=[replica("a", 0)],
        removed=["model-a-0: cluster is no longer selected: clusterSelector does not match: "],
    ),
    Case(
        "switching to disaggregated serving re-places replicas",
        deployment(1, decode=role(HOPPER), prefill=role(HOPPER)),
        [cluster("a", h100())],
        ["a/1:h100+h100"],
        existing=[replica("a", 0)],
        removed=["model-a-0: its roles (workers) differ from the deployment's"],
    ),
    Case(
        "duplicate identities keep the first by name",
        deployment(2),
        [cluster("a", h100(nodes=3))],
        ["a/0:h100", "a/1:h100"],
        existing=[replica("a", 0, name="r1"), replica("a", 0, name="r2")],
        removed=["r2: duplicates replica r1 at index 0"],
    ),
    Case(
        "scale down drops the highest index on the most-loaded cluster",
        deployment(2),
        [cluster("a", h100(nodes=4)), cluster("b", h100())],
        ["a/0:h100", "b/0:h100"],
        existing=[replica("a", 0), replica("a", 1), replica("b", 0)],
        removed=["model-a-1: scaled down to 2 replicas"],
    ),
    Case(
        "scale down breaks load ties towards the later cluster",
        deployment(1),
        [cluster("a", h100()), cluster("b", h100()), cluster("c", h100())],
        ["a/0:h100"],
        existing=[replica("b", 0), replica("a", 0), replica("c", 0)],
        removed=["model-b-0: scaled down to 1 replica", "model-c-0: scaled down to 1 replica"],
    ),
    Case(
        "replicas: 0 removes everything and is fully scheduled",
        deployment(0),
        [cluster("a", h100())],
        [],
        existing=[replica("a", 0)],
        removed=["model-a-0: scaled down to 0 replicas"],
    ),
    Case("replicas: 0 with an empty fleet", deployment(0), [], []),
    Case("an empty fleet", deployment(1), [], [], Reason.NO_CLUSTERS),
    Case(
        "disaggregated roles share a cluster, each on a pool that fits it",
        deployment(
            1,
            decode=role(HOPPER),
            prefill=role(request("gpu", 1, "arch == Ada"), workers=3),
        ),
        [cluster("a", h100()), cluster("b", h100(), l4(nodes=3))],
        ["b/0:h100+l4"],
        trace=[
            "cluster a: no pool matches role prefill",
            "cluster a pool h100 (prefill): request 'gpu' (count 1): gpu: selector",
        ],
    ),
    Case(
        "disaggregated roles search pool combinations instead of taking the first",
        deployment(1, decode=role(HOPPER), prefill=NEEDS_IB),
        [cluster("a", IB_NODE, PLAIN_NODE)],
        ["a/0:plain+ib"],
    ),
    Case(
        "disaggregated roles competing for one pool",
        deployment(2, decode=role(HOPPER), prefill=role(HOPPER)),
        [cluster("a", h100(nodes=3))],
        ["a/0:h100+h100"],
        Reason.INSUFFICIENT_CAPACITY,
        trace=["cluster a: its pools fit each role alone but not all roles of one replica"],
    ),
    Case(
        "a synthetic-only match is no match",
        deployment(1, request("nic", 8, "link == infiniband")),
        [cluster("a", IB_NODE)],
        [],
        Reason.INSUFFICIENT_CAPACITY,
        trace=["cluster a pool ib: matches only Synthetic devices (nic): nothing claimable"],
    ),
    Case(
        "a synthetic device refines placement next to a claimable one",
        deployment(2, *NEEDS_IB["nodeSelector"]["devices"]),
        [cluster("a", PLAIN_NODE), cluster("b", IB_NODE)],
        ["b/0:ib"],
        Reason.INSUFFICIENT_CAPACITY,
        trace=["cluster a pool plain: request 'nic' (count 8): gpu: selector"],
    ),
    Case(
        "counts are consumed across requests",
        deployment(1, *(request(f"g{i}", 4, "arch == Hopper") for i in range(3))),
        [cluster("a", h100())],
        [],
        Reason.INSUFFICIENT_CAPACITY,
        trace=["requests 'g0', 'g1', 'g2' cannot all be satisfied by one node at once"],
    ),
    Case(
        "two requests split a node's devices",
        deployment(1, request("a", 4, "arch == Hopper"), request("b", 4, "arch == Hopper")),
        [cluster("a", h100(nodes=1))],
        ["a/0:h100"],
    ),
    Case(
        "exact matching finds what greedy first-fit misses",
        deployment(
            1, request("any", 4, "arch == Hopper"), request("big", 4, "capacity.memory >= 80")
        ),
        [cluster("a", pool("mixed", 1, gpu(4, memory=80, name="big"), gpu(4, memory=40)))],
        ["a/0:mixed"],
    ),
    Case(
        "matchExpressions select clusters with Kubernetes semantics",
        deployment(
            4,
            cluster_selector={
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["prod", "canary"]},
                    {"key": "region", "operator": "NotIn", "values": ["eu"]},
                    {"key": "drain", "operator": "DoesNotExist"},
                ]
            },
        ),
        [
            cluster("a", h100(), labels={"tier": "prod", "region": "us"}),
            cluster("b", h100(), labels={"tier": "canary"}),
            cluster("c", h100(), labels={"tier": "prod", "region": "eu"}),
            cluster("d", h100(), labels={"tier": "prod", "drain": "yes"}),
            cluster("e", h100(), labels={"tier": "dev"}),
        ],
        ["a/0:h100", "a/1:h100", "b/0:h100", "b/1:h100"],
        trace=[
            "cluster c: clusterSelector does not match: region NotIn (eu): label region is 'eu'",
            "cluster d: clusterSelector does not match: drain DoesNotExist: label drain is 'yes'",
            "cluster e: clusterSelector does not match: tier In (canary, prod): label tier is",
        ],
    ),
    Case(
        "the priority allow-list excludes clusters",
        deployment(3, priority="prod"),
        [
            cluster("a", h100(), allowed=["batch"]),
            cluster("b", h100(), allowed=["batch", "prod"]),
            cluster("c", h100()),
        ],
        ["b/0:h100", "b/1:h100", "c/0:h100"],
        trace=["cluster a: priority 'prod' is not in allowedPriorities [batch]"],
    ),
    Case(
        # A default outside allowedPriorities is refused by the one reader of the block
        # (parse_scheduling): the message names the refused field, where it named the
        # resolved priority when placement read the block by itself.
        "the cluster default priority is checked when the deployment has none",
        deployment(1),
        [
            cluster("a", h100(), default_priority="high", allowed=["low"]),
            cluster("b", h100(), default_priority="low", allowed=["low"]),
        ],
        ["b/0:h100"],
        trace=[
            "cluster a: the deployment names no priority and the cluster's "
            "spec.scheduling.defaultPriority is refused: default priority 'high' is not in "
            "allowedPriorities"
        ],
    ),
    Case(
        "a selector failing at evaluation is a non-match with its error traced",
        deployment(1, request("gpu", 1, "boom")),
        [cluster("a", h100())],
        [],
        Reason.INSUFFICIENT_CAPACITY,
        trace=["selector 'boom' failed: boom: evaluation failed"],
    ),
    Case(
        "an invalid clusterSelector holds existing replicas and places nothing",
        deployment(3, cluster_selector={"matchExpressions": [{"key": "x", "operator": "In"}]}),
        [cluster("a", h100(nodes=4)), cluster("b", h100())],
        ["a/0:h100"],
        Reason.INVALID_CLUSTER_SELECTOR,
        existing=[replica("a", 0), replica("gone", 0)],
        removed=["model-gone-0: cluster no longer exists"],
    ),
    Case(
        "both selectors invalid: the clusterSelector is named first",
        deployment(
            1,
            request("gpu", 8, "arch ~ Hopper"),
            cluster_selector={"matchLabels": {"bad key!": "x"}},
        ),
        [cluster("a", h100())],
        [],
        Reason.INVALID_CLUSTER_SELECTOR,
    ),
    Case(
        "a device selector that does not compile holds existing replicas",
        deployment(3, request("gpu", 8, "arch ~ Hopper")),
        [cluster("a", h100(nodes=4), l4())],
        ["a/0:l4"],
        Reason.INVALID_NODE_SELECTOR,
        existing=[replica("a", 0, "l4", claim("gpu", 1))],
    ),
    Case(
        "a nodeSelector edit that matches nothing holds existing replicas",
        deployment(2, request("gpu", 8, "arch == Blackwell")),
        [cluster("a", h100(nodes=4))],
        ["a/0:h100"],
        Reason.INSUFFICIENT_CAPACITY,
        existing=[replica("a", 0)],
    ),
    Case(
        "a clusterSelector edit that matches nothing holds existing replicas",
        deployment(1, cluster_selector={"matchLabels": {"tier": "nowhere"}}),
        [cluster("a", h100())],
        ["a/0:h100"],
        Reason.NO_CLUSTERS,
        existing=[replica("a", 0)],
    ),
    Case(
        "scaling to zero while the selector matches nothing removes everything",
        deployment(0, request("gpu", 8, "arch == Blackwell")),
        [cluster("a", h100())],
        [],
        existing=[replica("a", 0)],
        removed=["model-a-0: its pool h100 no longer matches workers"],
    ),
    Case(
        "hold still scales down",
        deployment(1, request("gpu", 8, "arch ~ Hopper")),
        [cluster("a", h100()), cluster("b", h100())],
        ["a/0:h100"],
        Reason.INVALID_NODE_SELECTOR,
        existing=[replica("a", 0), replica("b", 0)],
        removed=["model-b-0: scaled down to 1 replica"],
    ),
    Case(
        "a priority naming no PriorityClass holds existing replicas and places nothing",
        deployment(3, priority="nope"),
        [cluster("a", h100(nodes=4)), cluster("b", h100())],
        ["a/0:h100"],
        Reason.PRIORITY_NOT_FOUND,
        existing=[replica("a", 0)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_schedule(case: Case) -> None:
    decision = run(case.dep, case.clusters, case.existing)
    assert placements(decision) == case.expect
    assert decision.condition.reason == case.reason
    assert decision.condition.status is (case.reason == Reason.ALL_SCHEDULED)
    # Expected removals are prefixes of the actual "name: reason" lines, in order.
    removed = [f"{r.name}: {r.reason}" for r in decision.removed]
    assert len(removed) == len(case.removed), removed
    for got, want in zip(removed, case.removed, strict=True):
        assert got.startswith(want), (got, want)
    lines = decision.trace_lines()
    for expected in case.trace:
        assert any(expected in line for line in lines), (expected, lines)
