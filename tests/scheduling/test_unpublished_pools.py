"""A pool still declared but not (yet) published holds its replicas; a removed one drops them."""

from modelplane.scheduling import Origin

from .builders import cluster, declaring, deployment, h100, placements, replica, run


def test_a_declared_but_unpublished_pool_holds_its_replica() -> None:
    # A restored or new cluster: spec.nodePools is there, status.gpuPools is not yet.
    fleet = [declaring(cluster("a"), "h100"), declaring(cluster("b", h100(4)), "h100")]
    decision = run(deployment(2), fleet, [replica("a", 0), replica("b", 0)])
    held = {r.name: r.origin for r in decision.replicas}
    assert held == {"model-a-0": Origin.HELD, "model-b-0": Origin.RETAINED}
    assert placements(decision) == ["a/0:h100", "b/0:h100"]
    assert decision.removed == ()


def test_a_pool_removed_from_the_spec_drops_its_replica() -> None:
    fleet = [declaring(cluster("a"), "l4"), declaring(cluster("b", h100(4)), "h100")]
    decision = run(deployment(1), fleet, [replica("a", 0)])
    (removed,) = decision.removed
    assert (removed.name, removed.reason) == (
        "model-a-0",
        "its pool h100 for workers no longer exists",
    )
    assert placements(decision) == ["b/0:h100"]
