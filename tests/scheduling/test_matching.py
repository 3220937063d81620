"""Matching a role's device requests against one node of a pool."""

from dataclasses import replace

import pytest

from modelplane.core.devices import ClaimRequest, Resolution
from modelplane.scheduling.matching import Matcher, Mismatch, RoleMatch
from modelplane.scheduling.model import DeviceRequest
from modelplane.scheduling.rejections import Rejection
from modelplane.scheduling.selectors import SelectorEvaluator

from .builders import (
    Obj,
    cluster,
    deployment,
    gpu,
    h100,
    nic,
    placements,
    pool,
    read_clusters,
    read_pool,
    request,
    run,
)
from .fake_engine import FakeEngine


def _match(devices: list[Obj], *requests: tuple[str, int, tuple[str, ...]]) -> RoleMatch | Mismatch:
    hardware = read_pool(pool("p", 1, *devices)).hardware
    matcher = Matcher(SelectorEvaluator(FakeEngine()))
    return matcher.match(tuple(DeviceRequest(n, c, s) for n, c, s in requests), hardware)


HOPPER = ("arch == Hopper",)

MATCHES = [
    # (id, node devices, requests, kind names each request takes)
    ("one request, one kind", [gpu(8)], [("g", 8, HOPPER)], ["gpu"]),
    ("no selectors match any kind", [gpu(8)], [("g", 2, ())], ["gpu"]),
    (
        "requests share a kind's count",
        [gpu(8)],
        [("a", 4, HOPPER), ("b", 4, HOPPER)],
        ["gpu", "gpu"],
    ),
    (
        "greedy would put the flexible request on the only kind the strict one fits",
        [gpu(4, memory=80, name="big"), gpu(4, memory=40, name="small")],
        [("any", 4, HOPPER), ("big", 4, ("capacity.memory >= 80",))],
        ["small", "big"],
    ),
    (
        "larger requests are placed first so small ones fill the gaps",
        [gpu(2, name="two"), gpu(6, name="six")],
        [("s", 2, HOPPER), ("l", 6, HOPPER)],
        ["two", "six"],
    ),
    (
        "a request that fits DRA and Synthetic kinds is claimed through DRA",
        [nic(8, name="fabric"), gpu(8)],
        [("g", 8, ())],
        ["gpu"],
    ),
    (
        "a synthetic co-request next to a claimable one",
        [gpu(8), nic(8)],
        [("g", 8, HOPPER), ("n", 8, ("link == infiniband",))],
        ["gpu", "nic"],
    ),
    (
        "32 claimed devices, as many as one DRA claim holds",
        [gpu(56, name="mig")],
        [("a", 24, HOPPER), ("b", 8, HOPPER)],
        ["mig", "mig"],
    ),
    (
        "a synthetic co-request does not count toward the claim limit",
        [gpu(56), nic(8)],
        [("g", 32, HOPPER), ("n", 8, ("link == infiniband",))],
        ["gpu", "nic"],
    ),
]


@pytest.mark.parametrize(
    ("devices", "requests", "kinds"), [c[1:] for c in MATCHES], ids=[c[0] for c in MATCHES]
)
def test_matches(
    devices: list[Obj], requests: list[tuple[str, int, tuple[str, ...]]], kinds: list[str]
) -> None:
    result = _match(devices, *requests)
    assert isinstance(result, RoleMatch), result
    names = [devices[k]["name"] for k in result.kinds]
    assert names == kinds
    claimed = [r for r, name in zip(requests, names, strict=True) if name != "nic"]
    assert [c.name for c in result.claims] == [r[0] for r in claimed if r[0] != "n"]
    for device, taken in zip(devices, result.demand[0], strict=True):
        used = sum(r[1] for r, name in zip(requests, names, strict=True) if name == device["name"])
        assert taken == (used if device["claim"] == "DRA" else 0)


MISMATCHES = [
    # (id, node devices, requests, reason, a fragment of the message)
    (
        "a selector is false",
        [gpu(8, arch="Ada")],
        [("g", 1, HOPPER)],
        Rejection.SELECTOR_MISMATCH,
        "selector 'arch == Hopper' is false",
    ),
    (
        "too few per node",
        [gpu(4)],
        [("g", 8, HOPPER)],
        Rejection.TOO_FEW_DEVICES,
        "gpu has only 4 per node",
    ),
    (
        "too few per node without selectors",
        [gpu(2)],
        [("g", 4, ())],
        Rejection.TOO_FEW_DEVICES,
        "request 'g' (count 4): gpu has only 2 per node",
    ),
    (
        "a small kind the selector rejects is reported for its selector",
        [gpu(1, arch="Ada")],
        [("g", 8, HOPPER)],
        Rejection.SELECTOR_MISMATCH,
        "gpu: selector 'arch == Hopper' is false",
    ),
    (
        "one selected kind too small among rejected ones",
        [gpu(8, arch="Ada", name="ada"), gpu(4, name="small")],
        [("g", 8, HOPPER)],
        Rejection.TOO_FEW_DEVICES,
        "ada: selector 'arch == Hopper' is false; small has only 4 per node",
    ),
    (
        "evaluation error",
        [gpu(8)],
        [("g", 1, ("boom",))],
        Rejection.SELECTOR_MISMATCH,
        "failed: boom: evaluation failed",
    ),
    (
        "missing attribute",
        [gpu(8)],
        [("g", 1, ("rack == r1",))],
        Rejection.SELECTOR_MISMATCH,
        "failed: no such key: rack",
    ),
    (
        "only synthetic",
        [gpu(8), nic(8)],
        [("n", 8, ("link == infiniband",))],
        Rejection.SYNTHETIC_ONLY,
        "matches only Synthetic devices (nic)",
    ),
    (
        "counts consumed across requests",
        [gpu(8)],
        [("a", 4, HOPPER), ("b", 4, HOPPER), ("c", 1, HOPPER)],
        Rejection.REQUESTS_CONFLICT,
        "requests 'a', 'b', 'c' cannot all be satisfied by one node at once",
    ),
    (
        "one request claims more devices than one DRA claim holds",
        [gpu(56)],
        [("g", 33, HOPPER)],
        Rejection.CLAIM_TOO_LARGE,
        "the requests claimed here ('g' (33)) sum to 33 devices per pod; "
        "one DRA ResourceClaim holds at most 32",
    ),
    (
        "claimed requests sum to more devices than one DRA claim holds",
        [gpu(56), nic(8)],
        [("a", 24, HOPPER), ("b", 16, HOPPER), ("n", 8, ("link == infiniband",))],
        Rejection.CLAIM_TOO_LARGE,
        "the requests claimed here ('a' (24), 'b' (16)) sum to 40 devices per pod",
    ),
    (
        "a pool without devices",
        [],
        [("g", 1, ())],
        Rejection.NO_DEVICES,
        "the pool declares no devices",
    ),
]


@pytest.mark.parametrize(
    ("devices", "requests", "reason", "message"),
    [c[1:] for c in MISMATCHES],
    ids=[c[0] for c in MISMATCHES],
)
def test_mismatches(
    devices: list[Obj],
    requests: list[tuple[str, int, tuple[str, ...]]],
    reason: Rejection,
    message: str,
) -> None:
    result = _match(devices, *requests)
    assert isinstance(result, Mismatch)
    assert result.reason is reason
    assert message in result.message


def test_claims_carry_the_matched_kind_device_class() -> None:
    devices = [gpu(8, device_class="h100.example.com")]
    digest = read_pool(pool("p", 1, *devices)).hardware.digest
    result = _match(devices, ("g", 2, HOPPER))
    assert isinstance(result, RoleMatch)
    resolved = Resolution(digest, ("gpu",))
    assert result.claims == (ClaimRequest("g", "h100.example.com", 2, HOPPER, resolved),)
    assert result.claims[0].as_dict() == {
        "name": "g",
        "deviceClassName": "h100.example.com",
        "count": 2,
        "selectors": [{"cel": "arch == Hopper"}],
        "resolved": {"hardware": digest, "devices": ["gpu"]},
    }


# Four kinds: two of the claimed class (one too small for the selector), one of
# another class, a Synthetic NIC; the claim may only ever take `big`.
_MIXED = [
    gpu(4, memory=40, name="small"),
    gpu(4, memory=80, name="big"),
    gpu(8, memory=80, name="other", device_class="other.example.com"),
    nic(8),
]
_BIG = ("g", 4, ("capacity.memory >= 80", "arch == Hopper"))


def test_a_claim_records_the_kinds_of_its_class_its_selectors_hold_on() -> None:
    result = _match(_MIXED, _BIG)
    assert isinstance(result, RoleMatch)
    (claim,) = result.options[0].claims
    assert claim.device_class_name == "gpu.nvidia.com"
    assert claim.resolved == Resolution(read_pool(pool("p", 1, *_MIXED)).hardware.digest, ("big",))
    # Without selectors there is nothing to evaluate, so nothing is recorded.
    plain = _match(_MIXED, ("g", 4, ()))
    assert isinstance(plain, RoleMatch)
    assert all(c.resolved is None for o in plain.options for c in o.claims)


def _recorded(claims: tuple[ClaimRequest, ...], devices: list[Obj]) -> tuple[object, int]:
    """What a fresh decision reads a replica with `claims` to hold on `devices`, and how
    many selector evaluations that took."""
    engine = FakeEngine()
    hardware = read_pool(pool("p", 1, *devices)).hardware
    demand = Matcher(SelectorEvaluator(engine)).recorded_demand(claims, hardware)
    return demand, engine.evaluations


def test_a_resolved_claim_is_read_on_the_same_hardware_without_its_selectors() -> None:
    """Another decision takes the kinds the claim recorded, evaluating none of another
    tenant's selectors, and reads exactly what evaluating them would give."""
    result = _match(_MIXED, _BIG)
    assert isinstance(result, RoleMatch)
    claims = result.options[0].claims
    unresolved = tuple(replace(c, resolved=None) for c in claims)
    read, evaluations = _recorded(claims, _MIXED)
    evaluated, spent = _recorded(unresolved, _MIXED)
    assert (read, evaluations) == (evaluated, 0)
    assert read == ((0, 4, 0, 0),) and spent > 0


def test_a_resolution_read_on_other_hardware_gives_way_to_the_selectors() -> None:
    """The class changed since the claim was resolved (the big kind now has 40 GB):
    the recorded kinds no longer say what the selectors hold on, so they are read."""
    result = _match(_MIXED, _BIG)
    assert isinstance(result, RoleMatch)
    claims = result.options[0].claims
    shrunk = [gpu(4, memory=40, name="small"), gpu(4, memory=40, name="big"), *_MIXED[2:]]
    read, evaluations = _recorded(claims, shrunk)
    assert read is None and evaluations > 0  # no kind holds: charged whole nodes
    tampered = tuple(replace(c, resolved=Resolution("0" * 16, ("small",))) for c in claims)
    assert _recorded(tampered, _MIXED)[0] == ((0, 4, 0, 0),)


def test_each_expression_and_device_is_evaluated_once_per_decision() -> None:
    clusters = read_clusters(
        [cluster(f"c{i}", pool(f"p{i}", 1, gpu(8), nic(8))) for i in range(50)]
    )
    pools = [c.pools[0] for c in clusters]
    engine = FakeEngine()
    matcher = Matcher(SelectorEvaluator(engine))
    requests = (DeviceRequest("g", 8, ("arch == Hopper", "capacity.memory >= 40")),)
    for p in pools:
        matcher.match(requests, p.hardware)
        # A content-equal but distinct hardware object hits the same memo.
        matcher.match(requests, read_pool(pool("q", 1, gpu(8), nic(8))).hardware)
    assert engine.devices == 2
    assert engine.evaluations == 3  # gpu: both selectors hold; nic: the first fails
    assert sorted(engine.compiled) == sorted(set(engine.compiled))


def test_recorded_claims_are_charged_to_their_kind() -> None:
    hardware = read_pool(
        pool("p", 1, gpu(4, device_class="a.example.com"), gpu(8, name="g2"))
    ).hardware
    matcher = Matcher(SelectorEvaluator(FakeEngine()))
    claims = (ClaimRequest("x", "gpu.nvidia.com", 8, HOPPER),)
    assert matcher.recorded_demand(claims, hardware) == ((0, 8),)
    gone = (ClaimRequest("x", "gone.example.com", 1, ()),)
    assert matcher.recorded_demand(gone, hardware) is None


def test_kinds_of_one_class_are_alternatives_of_one_claim_option() -> None:
    big, small = gpu(4, memory=141, name="big"), gpu(4, memory=80, name="small")
    result = _match([big, small], ("g", 4, ("capacity.memory >= 80",)))
    assert isinstance(result, RoleMatch)
    assert len(result.options) == 1
    assert result.options[0].demand == ((4, 0), (0, 4))


def test_kinds_of_two_classes_are_two_claim_options() -> None:
    full, shared = gpu(4, name="full"), gpu(4, name="shared", device_class="shared.example")
    result = _match([full, shared], ("g", 4, HOPPER))
    assert isinstance(result, RoleMatch)
    assert [o.claims[0].device_class_name for o in result.options] == [
        "gpu.nvidia.com",
        "shared.example",
    ]
    assert [o.demand for o in result.options] == [((4, 0),), ((0, 4),)]
    recorded = (ClaimRequest("g", "shared.example", 4, HOPPER),)
    assert result.option_for(recorded) is result.options[1]
    assert result.option_for(()) is result.options[0]


def test_only_minimal_vectors_are_kept() -> None:
    # Two requests on a node of one class: taking both from one kind, or one from each.
    result = _match([gpu(4, name="a"), gpu(4, name="b")], ("x", 2, HOPPER), ("y", 2, HOPPER))
    assert isinstance(result, RoleMatch)
    assert sorted(result.demand) == [(0, 4), (2, 2), (4, 0)]


def test_recorded_claims_of_a_class_may_take_any_of_its_kinds() -> None:
    hardware = read_pool(pool("p", 1, gpu(4, name="a"), gpu(4, name="b"))).hardware
    matcher = Matcher(SelectorEvaluator(FakeEngine()))
    claims = (ClaimRequest("x", "gpu.nvidia.com", 4, HOPPER),)
    assert matcher.recorded_demand(claims, hardware) == ((4, 0), (0, 4))


def test_a_role_claiming_more_than_one_claim_holds_is_placed_where_it_fits() -> None:
    # A MIG-partitioned node publishes 56 devices; 40 of them in one claim is more than
    # DRA allocates, so only the cluster whose requests fit one claim takes the replica.
    mig = pool("mig", 2, gpu(56, name="mig"), nic(8))
    clusters = [cluster("a-mig", mig), cluster("b-h100", h100(2))]
    dep = deployment(1, request("gpu", 32), request("nic", 8, "link == infiniband"))
    placed = run(dep, clusters)
    assert placements(placed) == ["a-mig/0:mig"]

    decision = run(deployment(1, request("gpu", 40)), clusters)

    assert placements(decision) == []
    assert decision.condition.status is False
    trace = {(e.cluster, e.pool): e for e in decision.match_trace()}
    entry = trace["a-mig", "mig"]
    assert entry.reason == Rejection.CLAIM_TOO_LARGE
    assert "sum to 40 devices per pod" in (entry.message or "")
    assert "nodeSelector.devices[].count" in (entry.message or "")
