"""`modelplane bench placement`: the exact solver it compares with, and what it reports."""

import json

import pytest

from modelplane.scheduling import Deployment, DeviceRequest, Role, default_engine, schedule
from modelplane.scheduling.model import Cluster, Pool
from modelplane_cli.main import main
from modelplane_dev.bench_exact import INFEASIBLE, ExactSolver
from modelplane_dev.bench_fleets import NODE_SHAPES, SELECTORS, fleet
from modelplane_dev.bench_placement import _from_decision

ANY = SELECTORS["any"]


def _deployment(name: str, gpus: int, replicas: int) -> Deployment:
    role = Role("workers", (DeviceRequest("gpu", gpus, (ANY,)),))
    return Deployment(name, "bench", replicas, (role,))


def _cluster(shape: str, nodes: int) -> Cluster:
    pool = Pool(shape, shape, nodes, NODE_SHAPES[shape])
    return Cluster("c", {}, (pool,), declared_pools=frozenset({shape}))


@pytest.fixture(name="solver")
def _solver() -> ExactSolver:
    return ExactSolver(default_engine())


EXACT = [
    # (id, node shape, nodes, pods already there (gpus, replicas), new pod gpus, most that fit)
    ("3-GPU pods beside 5-GPU ones", "h200", 2, (5, 2), 3, 2),
    ("6-GPU pods leave 2 on each node", "h200", 3, (2, 3), 6, 3),
    ("a mixed node takes either kind of one class", "mixed", 1, (4, 1), 4, 1),
    ("nothing fits a full pool", "l40s", 1, (4, 1), 1, 0),
]


@pytest.mark.parametrize(
    ("shape", "nodes", "before", "gpus", "most"),
    [c[1:] for c in EXACT],
    ids=[c[0] for c in EXACT],
)
def test_the_exact_solver_and_the_scheduler_agree_on_small_pools(
    solver: ExactSolver, shape: str, nodes: int, before: tuple[int, int], gpus: int, most: int
) -> None:
    engine = default_engine()
    cluster = _cluster(shape, nodes)
    running = _deployment("running", before[0], before[1])
    placed = schedule(running, [cluster], [], engine=engine)
    state = _from_decision(running, placed.replicas)
    assert len(state) == before[1]
    arriving = _deployment("new", gpus, 10)
    assert solver.best(arriving, [cluster], state).count == most
    assert len(schedule(arriving, [cluster], state, engine=engine).replicas) == most


def test_the_overcommit_check_finds_pods_no_packing_holds(solver: ExactSolver) -> None:
    cluster = _cluster("h200", 1)
    three = _deployment("three", 3, 3)
    # Placed on two separate one-node clusters' worth of room, then read as on one node.
    wide = _cluster("h200", 2)
    decision = schedule(three, [wide], [], engine=default_engine())
    state = _from_decision(three, decision.replicas)
    assert len(state) == 3
    assert solver.overcommitted(wide, state) == []
    assert solver.overcommitted(cluster, state) == [("h200", INFEASIBLE)]


def test_fleets_are_seeded() -> None:
    assert fleet(7) == fleet(7)
    assert fleet(7) != fleet(8)


def test_scarce_fleets_keep_few_nic_and_ada_nodes_for_arrivals_that_come_last() -> None:
    for seed in range(1, 31):
        bench = fleet(seed, "scarce")
        nodes = {
            shape: sum(p.nodes for c in bench.clusters for p in c.pools if p.name == shape)
            for shape in ("h100", "h200", "hopada")
        }
        assert 0 < nodes["h100"] < nodes["h200"]
        assert 0 < nodes["hopada"] < nodes["h200"]
        needs = [
            any(
                r.selectors != (SELECTORS["any"],) and r.selectors != (SELECTORS["hopper"],)
                for role in d.roles
                for r in role.requests
            )
            for d in bench.arrivals
        ]
        # Those needing NICs or Ada GPUs arrive after every one that needs neither.
        assert needs == sorted(needs) and needs[-1]
    assert fleet(8, "scarce") == fleet(8, "scarce")
    assert fleet(8, "scarce") != fleet(8)


def test_the_exact_arrival_order_run_spares_the_nic_nodes(solver: ExactSolver) -> None:
    """Equal GPU counts tie; the scarce NICs decide, as they do for best fit."""
    nics = Pool("h100", "h100", 1, NODE_SHAPES["h100"])
    plain = Pool("h100plain", "h100plain", 1, NODE_SHAPES["h100plain"])
    cluster = Cluster("c", {}, (nics, plain), declared_pools=frozenset({"h100", "h100plain"}))
    role = Role("workers", (DeviceRequest("gpu", 8, (SELECTORS["hopper"],)),))
    result = solver.best(Deployment("d", "bench", 1, (role,)), [cluster], [], prefer_small=True)
    assert [r.roles[0][1] for r in result.replicas] == ["h100plain"]


@pytest.mark.parametrize("shapes", ["general", "scarce"])
def test_the_report(capsys: pytest.CaptureFixture[str], shapes: str) -> None:
    # Four fleets are too few for the 99.5% goal, which `make bench` holds over 200
    # scarce fleets: arrival order costs the odd replica on one fleet, gains it on another.
    floor = "0.9" if shapes == "scarce" else "0.995"
    assert (
        main(["bench", "placement", "--fleets", "4", "--shapes", shapes, "--min-placed", floor])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["fleets"] == 4
    assert report["shapes"] == shapes
    assert report["overcommits"] == 0
    assert report["decisions"] > 0
    assert report["decision_match_rate"] >= 0.995
    assert set(report["decisions_matching_by_category"]) <= {
        "disaggregated",
        "multi_kind_nodes",
        "non_power_of_two",
        "prefilled",
    }


def test_a_threshold_not_met_fails_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "placement", "--fleets", "2", "--min-placed", "2"]) == 1
    assert json.loads(capsys.readouterr().out)["placed_ratio"] < 2
