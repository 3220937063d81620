"""A claim's recorded resolution says exactly what evaluating its selectors would.

Other decisions read which devices a replica may hold from the kinds its claim
recorded on that hardware instead of running its selectors. If the two ever differed,
those decisions would charge the replica other devices than DRA may give it: an
overcommit, or capacity hidden. The property: on any node shape, for any requests, the
demand read from each option's resolved claims equals the demand read by evaluating
them, and a resolution recorded on other hardware is never taken.
"""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.core.devices import ClaimRequest, Resolution
from modelplane.scheduling.ledger import Demand
from modelplane.scheduling.matching import Matcher, RoleMatch
from modelplane.scheduling.model import DeviceRequest, PoolHardware
from modelplane.scheduling.selectors import SelectorEvaluator

from .builders import Obj, gpu, nic, pool, read_pool
from .fake_engine import FakeEngine

# Several kinds per class, so a resolution names a subset of its class's kinds.
_KINDS = st.lists(
    st.tuples(
        st.sampled_from([1, 2, 4, 8]),
        st.sampled_from(["Hopper", "Ada"]),
        st.sampled_from([24, 48, 80]),
        st.sampled_from(["gpu.nvidia.com", "other.example.com"]),
    ),
    min_size=1,
    max_size=4,
)
_SELECTORS = st.lists(
    st.sampled_from(
        ["arch == Hopper", "arch == Ada", "capacity.memory >= 48", "count >= 4", "true", "boom"]
    ),
    max_size=2,
)
_REQUESTS = st.lists(st.tuples(st.sampled_from([1, 2, 4]), _SELECTORS), min_size=1, max_size=3)


def _hardware(kinds: list[tuple[int, str, int, str]], with_nic: bool) -> PoolHardware:
    devices: list[Obj] = [
        gpu(count, arch, memory, name=f"k{i}", device_class=device_class)
        for i, (count, arch, memory, device_class) in enumerate(kinds)
    ]
    if with_nic:
        devices.append(nic(8))
    return read_pool(pool("p", 1, *devices)).hardware


def _read(claims: tuple[ClaimRequest, ...], hardware: PoolHardware) -> Demand | None:
    return Matcher(SelectorEvaluator(FakeEngine())).recorded_demand(claims, hardware)


@settings(max_examples=150, deadline=None)
@given(_KINDS, st.booleans(), _REQUESTS, _KINDS)
def test_a_resolution_reads_as_its_selectors_evaluate(
    kinds: list[tuple[int, str, int, str]],
    with_nic: bool,
    wanted: list[tuple[int, list[str]]],
    other_kinds: list[tuple[int, str, int, str]],
) -> None:
    hardware = _hardware(kinds, with_nic)
    requests = tuple(
        DeviceRequest(f"r{i}", count, tuple(selectors))
        for i, (count, selectors) in enumerate(wanted)
    )
    match = Matcher(SelectorEvaluator(FakeEngine())).match(requests, hardware)
    if not isinstance(match, RoleMatch):
        return
    other = _hardware(other_kinds, not with_nic)
    for option in match.options:
        resolved = option.claims
        unresolved = tuple(replace(c, resolved=None) for c in resolved)
        assert _read(resolved, hardware) == _read(unresolved, hardware)
        # Read on other hardware, the recorded kinds are not taken.
        assert _read(resolved, other) == _read(unresolved, other)
        for claim in resolved:
            if claim.resolved is not None:
                assert claim.resolved.hardware == hardware.digest
                naming_none = Resolution(hardware.digest, ())
                assert other.digest != hardware.digest or other == hardware
                assert _read((replace(claim, resolved=naming_none),), hardware) is None
