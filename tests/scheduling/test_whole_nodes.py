"""A disaggregated replica's pools: among combinations that fit as many replicas, the one
that leaves the most nodes wholly free."""

from .builders import claim, cluster, deployment, gpu, placements, pool, replica, request, role, run


def test_prefill_fills_a_half_used_node_before_it_splits_a_whole_one() -> None:
    # Prefill (4 Hopper GPUs) fits on "whole" (one free 8-GPU node, listed first) or on
    # "halves" (one node another deployment half uses). Either fits the one replica
    # decode's pool allows; only "halves" leaves a whole node for the next.
    fleet = [
        cluster(
            "a",
            pool("whole", 1, gpu(8)),
            pool("halves", 1, gpu(8)),
            pool("decode", 1, gpu(4, "Ada", 48)),
        )
    ]
    other = replica("a", 0, "halves", claim("gpu", 4, "arch == Hopper"), deployment_name="other")
    dep = deployment(
        1,
        decode=role(request("gpu", 4, "arch == Ada")),
        prefill=role(request("gpu", 4, "arch == Hopper")),
    )
    decision = run(dep, fleet, [other])
    assert placements(decision) == ["a/0:decode+halves"]
