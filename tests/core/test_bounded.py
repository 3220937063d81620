"""The one bounded memo: least recently used out first, and what keeps one."""

import pytest
from modelplane_models.shapes import Claim

from modelplane.core.bounded import BoundedMemo, ByIdentity
from modelplane.core.devices import DeviceSpec
from modelplane.scheduling.cel_engine import CelEngine


def test_the_memo_keeps_the_most_recently_used() -> None:
    kept: BoundedMemo[str, int] = BoundedMemo(entries=2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now b is the least recently used
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3)
    assert len(kept) == 2
    assert kept.get_or_make("d", lambda: 4) == 4 and len(kept) == 2


def _kind(name: str, driver: str, version: str = "1.0.0") -> DeviceSpec:
    return DeviceSpec(name, Claim.DRA, driver, None, 1, attributes=(("v", "version", version),))


def test_the_cel_engine_builds_a_device_kind_once_within_its_bound() -> None:
    engine = CelEngine(devices=1)
    h100 = _kind("h100", "gpu.nvidia.com")
    built = engine.device(h100)
    assert engine.device(h100) is built
    engine.device(_kind("mi300", "gpu.amd.com"))  # evicts h100
    again = engine.device(h100)
    assert again is not built and again == built


def test_the_cel_engine_keeps_a_kind_cel_cannot_represent_as_its_error() -> None:
    engine = CelEngine()
    odd = _kind("odd", "gpu.nvidia.com", version="x.y")
    for _ in range(2):
        with pytest.raises(ValueError, match=r'attributes\["v"\]: invalid version "x\.y"'):
            engine.device(odd)


def test_by_identity_keeps_a_value_for_the_very_object_until_its_bound() -> None:
    kept = ByIdentity[list[int], int](2)
    made: list[int] = []

    def total(source: list[int]) -> int:
        made.append(sum(source))
        return sum(source)

    a, b, equal_to_a = [1, 2], [3], [1, 2]
    assert kept.get_or_make(a, total) == 3 and kept.get_or_make(a, total) == 3
    assert made == [3]  # the same object: made once
    assert kept.get_or_make(equal_to_a, total) == 3 and made == [3, 3]  # equal is not enough
    kept.get_or_make(b, total)  # past the bound: everything dropped, then b kept
    assert len(kept) == 1
    kept.get_or_make(a, total)
    assert made == [3, 3, 3, 3]
    kept.clear()
    assert len(kept) == 0
