"""The match trace: a machine reason and, for disaggregated deployments, a role per rejection."""

import pytest
from modelplane_models.model_deployment import MatchTraceEntry

from modelplane.scheduling import Rejection

from .builders import (
    HOPPER,
    cluster,
    deployment,
    gpu,
    h100,
    l4,
    nic,
    pool,
    request,
    role,
    run,
)
from .trace_cases import (
    ADA_1,
    GPU_CLASS,
    LWS_CRD,
    Case,
    Entry,
    aligned,
    lacking,
    rooted,
    without_device_class,
)
from .trace_more_cases import MORE_CASES

_MAIN = [
    Case(
        "an untolerated taint",
        deployment(1),
        [
            cluster("a", h100(), taints=[{"key": "example.com/drain", "effect": "NoSchedule"}]),
            cluster("b", h100()),
        ],
        [("a", None, None, Rejection.TAINTED)],
        "the cluster is tainted example.com/drain:NoSchedule, not tolerated",
    ),
    Case(
        "a queue without quota left",
        deployment(1),
        [
            cluster(
                "a",
                h100(),
                queues=[
                    {
                        "name": "ml",
                        "provider": "KAI",
                        "namespaces": ["ml"],
                        "gpu": {"quota": 16, "used": 12},
                    }
                ],
            ),
            cluster("b", h100()),
        ],
        [("a", None, None, Rejection.QUEUE_FULL)],
        "KAI queue ml has 4 of 16 GPUs of quota left; a replica needs 8",
    ),
    Case(
        "an unreachable cluster",
        deployment(1),
        [cluster("a", h100(), reachable=False), cluster("b", h100())],
        [("a", None, None, Rejection.CLUSTER_UNREACHABLE)],
        "the cluster is unreachable (Reachable=False)",
    ),
    Case(
        "a cluster that cannot be read",
        deployment(1),
        [without_device_class(cluster("a", h100())), cluster("b", h100())],
        [("a", None, None, Rejection.CLUSTER_UNREADABLE)],
        "cannot be read (status.gpuPools[0].devices[0].deviceClassName: is required when "
        "claim is DRA): its replicas are kept as recorded, nothing new is placed",
    ),
    Case(
        "clusterSelector",
        deployment(1, cluster_selector={"matchLabels": {"tier": "prod"}}),
        [
            cluster("a", h100(), labels={"tier": "dev"}),
            cluster("b", h100(), labels={"tier": "prod"}),
        ],
        [("a", None, None, Rejection.CLUSTER_SELECTOR_MISMATCH)],
        "clusterSelector does not match: tier=prod: label tier is 'dev'",
    ),
    Case(
        "priority allow-list",
        deployment(1, priority="prod"),
        [cluster("a", h100(), allowed=["batch"]), cluster("b", h100())],
        [("a", None, None, Rejection.PRIORITY_NOT_ALLOWED)],
        "priority 'prod' is not in allowedPriorities [batch]",
    ),
    Case(
        "a stack without what multi-node replicas need",
        deployment(1, topology={"pipeline": 2}),
        [lacking(cluster("a", h100()), LWS_CRD), cluster("b", h100())],
        [("a", None, None, Rejection.STACK_INCOMPLETE)],
        "the cluster lacks CustomResourceDefinition leaderworkersets.leaderworkerset.x-k8s.io, "
        "which multi-node replicas need",
    ),
    Case(
        "a pool whose DeviceClass the stack lacks",
        deployment(1),
        [lacking(cluster("a", h100()), GPU_CLASS), cluster("b", h100())],
        [
            ("a", None, None, Rejection.STACK_INCOMPLETE),
            ("a", "h100", None, Rejection.STACK_INCOMPLETE),
        ],
        "the cluster lacks DeviceClass gpu.nvidia.com, which its devices need",
    ),
    Case(
        "a cluster without pools",
        deployment(1),
        [cluster("a"), cluster("b", h100())],
        [("a", None, None, Rejection.NO_POOLS)],
        "publishes no GPU pools",
    ),
    Case(
        "a selector that holds on no kind",
        deployment(1),
        [cluster("a", l4())],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "l4", None, Rejection.SELECTOR_MISMATCH),
        ],
        "request 'gpu' (count 8): gpu: selector 'arch == Hopper' is false",
    ),
    Case(
        "a selector that fails at evaluation",
        deployment(1, request("gpu", 1, "boom")),
        [cluster("a", h100())],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "h100", None, Rejection.SELECTOR_MISMATCH),
        ],
        "selector 'boom' failed: boom: evaluation failed",
    ),
    Case(
        "a selected kind with too few devices per node",
        deployment(1, request("gpu", 8, "arch == Ada")),
        [cluster("a", l4())],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "l4", None, Rejection.TOO_FEW_DEVICES),
        ],
        "request 'gpu' (count 8): gpu has only 1 per node",
    ),
    Case(
        "a pool without devices next to one that fits",
        deployment(1),
        [cluster("a", pool("bare", 2), h100())],
        [("a", "bare", None, Rejection.NO_DEVICES)],
        "request 'gpu': the pool declares no devices",
    ),
    Case(
        "only Synthetic devices match",
        deployment(1, request("nic", 8, "link == infiniband")),
        [cluster("a", pool("ib", 1, gpu(8), nic(8)))],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "ib", None, Rejection.SYNTHETIC_ONLY),
        ],
        "matches only Synthetic devices (nic): nothing claimable",
    ),
    Case(
        "the claimed requests need more devices than one DRA claim holds",
        deployment(1, request("gpu", 24), request("more", 16)),
        [cluster("a", pool("mig", 1, gpu(56)))],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "mig", None, Rejection.CLAIM_TOO_LARGE),
        ],
        "the requests claimed here ('gpu' (24), 'more' (16)) sum to 40 devices per pod",
    ),
    Case(
        "requests that one node cannot satisfy together",
        deployment(1, *(request(f"g{i}", 4, "arch == Hopper") for i in range(3))),
        [cluster("a", h100())],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "h100", None, Rejection.REQUESTS_CONFLICT),
        ],
        "requests 'g0', 'g1', 'g2' cannot all be satisfied by one node at once",
    ),
    Case(
        "requests whose devices share no PCIe root",
        aligned(deployment(1, request("gpu", 4, "arch == Hopper"), request("nic", 1))),
        [
            cluster(
                "a",
                pool(
                    "split",
                    1,
                    rooted(gpu(4, name="gpu-r0"), "r0"),
                    rooted(gpu(2, name="gpu-r1"), "r1"),
                    rooted(
                        {**nic(1, name="nic-r1"), "claim": "DRA", "deviceClassName": "nic"}, "r1"
                    ),
                ),
            )
        ],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "split", None, Rejection.DEVICES_NOT_ALIGNED),
        ],
        "requests 'gpu', 'nic' need their devices on one resource.kubernetes.io/pcieRoot "
        "(r0, r1), and no value has enough of them on one node",
    ),
    Case(
        "no free devices left",
        deployment(2),
        [cluster("a", h100(nodes=1))],
        [
            ("a", None, None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", None, Rejection.INSUFFICIENT_CAPACITY),
        ],
        "not enough free devices: needs 1 pod of {gpu 8}; no free devices on its 1 node",
    ),
    Case(
        "free nodes in no one NVLink domain",
        deployment(2, topology={"pipeline": 2}),
        [cluster("a", {**h100(nodes=4), "nvlinkDomainNodes": 3})],
        [
            ("a", None, None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", None, Rejection.NO_NVLINK_DOMAIN_ROOM),
        ],
        "needs 2 free nodes in one NVLink domain (topology.nvlinkDomainNodes 3); the most "
        "any of its 2 domains has free is 1",
    ),
    Case(
        "roles that fit alone but not together",
        deployment(1, decode=role(HOPPER), prefill=role(HOPPER)),
        [cluster("a", h100(nodes=1))],
        [("a", None, None, Rejection.ROLES_DO_NOT_FIT_TOGETHER)],
        "its pools fit each role alone but not all roles of one replica together",
    ),
    Case(
        "a full pool names each role it has no room for",
        deployment(2, decode=role(HOPPER), prefill=role(HOPPER)),
        [cluster("a", h100(nodes=2))],
        [
            ("a", None, None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", "decode", Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", "prefill", Rejection.INSUFFICIENT_CAPACITY),
        ],
        "not enough free devices: needs 1 pod of {gpu 8}; no free devices on its 2 nodes",
    ),
    Case(
        "a role no pool serves names the role, not in its message",
        deployment(1, decode=role(HOPPER), prefill=role(ADA_1)),
        [cluster("a", h100())],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "h100", "prefill", Rejection.SELECTOR_MISMATCH),
        ],
        "request 'gpu' (count 1): gpu: selector 'arch == Ada' is false",
    ),
    Case(
        "pools are ordered by name, then role, whatever their published order",
        deployment(1, decode=role(ADA_1), prefill=role(request("gpu", 4, "arch == Ada"))),
        [cluster("a", h100(name="zeta"), h100(name="alpha"))],
        [
            ("a", None, None, Rejection.NO_MATCHING_POOL),
            ("a", "alpha", "decode", Rejection.SELECTOR_MISMATCH),
            ("a", "alpha", "prefill", Rejection.SELECTOR_MISMATCH),
            ("a", "zeta", "decode", Rejection.SELECTOR_MISMATCH),
            ("a", "zeta", "prefill", Rejection.SELECTOR_MISMATCH),
        ],
        "request 'gpu' (count 4): gpu: selector 'arch == Ada' is false",
    ),
]


CASES = [*_MAIN, *MORE_CASES]


def _entries(trace: list[MatchTraceEntry]) -> list[Entry]:
    return [(e.cluster or "", e.pool, e.role, Rejection(e.reason)) for e in trace]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reason_and_role_of_each_rejection(case: Case) -> None:
    budget = case.budget() if case.budget is not None else None
    trace = run(case.dep, case.clusters, case.existing, budget=budget, cache=case.cache)
    trace = trace.match_trace()
    assert _entries(trace) == case.entries
    assert any(case.message in (entry.message or "") for entry in trace[-2:]), trace
    for entry in trace:
        # The role is a field now; no message repeats it as a prefix.
        assert entry.message is not None
        assert not entry.message.startswith(("decode:", "prefill:", "workers:")), entry


def test_every_rejection_has_a_case() -> None:
    covered = {entry[3] for case in CASES for entry in case.entries}
    assert covered == set(Rejection)
