"""Scale down: how many go, and that a serving replica never goes before one that does
not serve (a surge left over when a move is no longer needed goes first)."""

from hypothesis import given
from hypothesis import strategies as st

from modelplane.scheduling.decision import DesiredReplica, Origin, RemovedReplica
from modelplane.scheduling.retain import Kept, scale_down

replicas = st.lists(
    st.tuples(st.sampled_from(["east", "west", "north"]), st.booleans()), max_size=8
)


def kept_of(drawn: list[tuple[str, bool]]) -> list[Kept]:
    return [
        Kept(DesiredReplica(f"r{i}", cluster, i, (), Origin.RETAINED), (), serving)
        for i, (cluster, serving) in enumerate(drawn)
    ]


@given(replicas, st.integers(min_value=0, max_value=8))
def test_scale_down_keeps_wanted_and_drops_idle_replicas_first(
    drawn: list[tuple[str, bool]], wanted: int
) -> None:
    kept = kept_of(drawn)
    removed: list[RemovedReplica] = []
    left = scale_down(kept, wanted, removed)
    assert len(left) == min(len(kept), wanted)
    assert {r.name for r in removed} == {k.replica.name for k in kept} - {
        k.replica.name for k in left
    }
    gone = {r.name for r in removed}
    serving_gone = any(k.serving for k in kept if k.replica.name in gone)
    idle_left = any(not k.serving for k in left)
    assert not (serving_gone and idle_left)
    assert all(
        r.reason == f"scaled down to {wanted} replica{'s' if wanted != 1 else ''}" for r in removed
    )


def test_a_leftover_surge_goes_before_the_serving_replica_it_was_to_replace() -> None:
    # The serving replica has the higher index on the most-loaded cluster, which the
    # plain order would drop.
    kept = kept_of([("west", False), ("east", True), ("east", True)])
    removed: list[RemovedReplica] = []
    left = scale_down(kept, 2, removed)
    assert [r.name for r in removed] == ["r0"]
    assert [k.replica.name for k in left] == ["r1", "r2"]
