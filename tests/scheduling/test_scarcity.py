"""Best fit weighs scarce hardware: a replica that needs none of it leaves it to those that do."""

from .builders import cluster, deployment, gpu, nic, placements, pool, request, run

IB = request("ib", 8, "link == infiniband")
HOPPER = request("gpu", 8, "arch == Hopper")


def test_plain_nodes_fill_before_the_few_with_infiniband() -> None:
    # Published order and equal GPU counts would put a plain model on the NIC nodes.
    fleet = [
        cluster("a", pool("ib", 1, gpu(8), nic(8)), pool("plain", 2, gpu(8))),
        cluster("b", pool("plain", 2, gpu(8))),
    ]
    plain = run(deployment(1, HOPPER), fleet)
    assert [p.split(":")[1] for p in placements(plain)] == ["plain"]


def test_the_scarce_nodes_stay_for_the_deployment_that_needs_them() -> None:
    fleet = [cluster("a", pool("ib", 1, gpu(8), nic(8)), pool("plain", 1, gpu(8)))]
    first = run(deployment(1, HOPPER, name="plain-model"), fleet)
    assert placements(first) == ["a/0:plain"]


def test_a_rare_second_gpu_kind_is_kept_for_those_that_ask_for_it() -> None:
    common = pool("hopper", 2, gpu(8, "Hopper", 80))
    rare = pool("mixed", 1, gpu(4, "Hopper", 80, name="hop"), gpu(4, "Ada", 48, name="ada"))
    fleet = [cluster("a", rare, common), cluster("b", pool("hopper", 2, gpu(8, "Hopper", 80)))]
    decision = run(deployment(1, request("gpu", 4, "arch == Hopper")), fleet)
    assert [p.split(":")[1] for p in placements(decision)] == ["hopper"]
