"""Which keys a hub's objects go under: plain until a move, then the hub's own."""

import pytest

from modelplane.traffic.hubs import hub_suffix

ROUTE_ON_A = {"route": "a", "namespace": "a"}


@pytest.mark.parametrize(
    ("observed", "cluster", "suffix"),
    [
        pytest.param({}, "a", "", id="nothing composed yet: plain keys"),
        pytest.param(ROUTE_ON_A, "a", "", id="running on this hub: plain keys, no rename"),
        pytest.param(ROUTE_ON_A, "b", "@b", id="running on another hub: this hub's keys"),
        pytest.param({"route@b": "b"}, "b", "@b", id="moved here: the keys stay"),
        pytest.param({"route@b": "b"}, "a", "", id="moved on again: plain keys are free"),
        pytest.param({"route@b": "b"}, "c", "", id="a third hub: plain keys too"),
        pytest.param({"route": None}, "b", "", id="an unreadable ProviderConfig is no move"),
        pytest.param({"route@ab": "ab"}, "b", "", id="another cluster's suffix is not this one's"),
    ],
)
def test_hub_suffix(observed: dict[str, str | None], cluster: str, suffix: str) -> None:
    assert hub_suffix(observed, cluster, cluster) == suffix
