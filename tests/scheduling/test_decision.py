"""What a Decision carries: names, role placements, origins, events, trace."""

from modelplane.core.naming import is_dns_label
from modelplane.core.vocabulary import Reason
from modelplane.scheduling import Decision, EventType, Origin, replica_name, schedule

from .builders import (
    HOPPER,
    claim,
    cluster,
    deployment,
    h100,
    l4,
    read_dep,
    read_one_cluster,
    read_replicas,
    recorded_role,
    replica,
    request,
    role,
    run,
)
from .fake_engine import FakeEngine


def test_new_replica_names_are_opaque_and_stable() -> None:
    name = "a-rather-long-model-deployment-name-that-goes-on-and-on-forever"
    dep = deployment(3, name=name)
    first = run(dep, [cluster("cluster-east", h100(nodes=3))])
    again = run(dep, [cluster("cluster-east", h100(nodes=3))])
    names = [r.name for r in first.replicas]
    assert names == [r.name for r in again.replicas]
    assert len(set(names)) == 3
    for replica_ in first.replicas:
        assert is_dns_label(replica_.name)
        assert "east" not in replica_.name
        assert replica_.name == replica_name(read_dep(dep), replica_.cluster, replica_.index)


def test_names_differ_by_namespace() -> None:
    a = read_dep(deployment(1, namespace="one"))
    b = read_dep(deployment(1, namespace="two"))
    assert replica_name(a, "c", 0) != replica_name(b, "c", 0)


def test_placed_replica_roles() -> None:
    decision = run(deployment(1), [cluster("a", h100())])
    (placed,) = decision.replicas
    assert placed.origin is Origin.PLACED
    assert placed.new
    assert not placed.retained
    (workers,) = placed.roles
    assert workers.as_dict() == {
        "count": 1,
        "topology": {"tensor": 1, "pipeline": 1, "data": 1, "dataLocal": 1},
        "nodePoolName": "h100",
        "deviceRequests": [
            {
                "name": "gpu",
                "deviceClassName": "gpu.nvidia.com",
                "count": 8,
                "selectors": [{"cel": "arch == Hopper"}],
                # What its selectors held on, read by other decisions on this hardware.
                "resolved": {"hardware": "fae815fdf7934c8c", "devices": ["gpu"]},
            }
        ],
    }


def test_retained_replica_follows_the_current_spec_and_keeps_its_name() -> None:
    """What a running replica's cluster can change in place (here a single-node role's
    worker count: a Deployment's replicas) it follows under its name."""
    dep = deployment(1, request("gpu", 8, "arch == Hopper"), workers=2)
    # Its claim records no resolution (as before they were recorded): the one the
    # decision adds is not a change of what it claims, so it is not replaced.
    existing = replica("a", 5, "h100", claim("gpu", 8, "arch == Hopper"), name="kept-name")
    decision = run(dep, [cluster("a", h100(nodes=2))], [existing])
    (kept,) = decision.replicas
    assert (kept.name, kept.cluster, kept.index, kept.origin) == (
        "kept-name",
        "a",
        5,
        Origin.RETAINED,
    )
    assert kept.retained
    (workers,) = kept.roles
    assert workers.workers == 2
    assert decision.events == ()


def test_a_replica_whose_claims_change_is_replaced_under_a_new_name() -> None:
    """A ResourceClaimTemplate's spec is immutable: a replica whose device requests the
    deployment changed is replaced, never rewritten under its name."""
    dep = deployment(1, request("gpu", 4, "capacity.memory >= 40"))
    existing = replica("a", 5, "h100", claim("gpu", 8, "arch == Hopper"), name="kept-name")
    decision = run(dep, [cluster("a", h100())], [existing])
    (placed,) = decision.replicas
    assert (placed.cluster, placed.origin) == ("a", Origin.PLACED)
    assert placed.name != "kept-name"
    (removed,) = decision.removed
    assert removed.name == "kept-name"
    assert removed.reason.startswith("its workers device requests changed, which its cluster")
    (workers,) = placed.roles
    assert [r.as_dict() for r in workers.device_requests] == [
        {
            "name": "gpu",
            "deviceClassName": "gpu.nvidia.com",
            "count": 4,
            "selectors": [{"cel": "capacity.memory >= 40"}],
            "resolved": {"hardware": "fae815fdf7934c8c", "devices": ["gpu"]},
        }
    ]


def test_held_replica_is_kept_exactly_as_recorded() -> None:
    existing = replica(
        "a",
        0,
        roles={
            "decode": recorded_role("h100", claim("gpu", 8, "old"), workers=3),
            "prefill": recorded_role("l4", claim("gpu", 1)),
        },
    )
    broken = deployment(1, decode=role(request("gpu", 8, "arch ~ x")), prefill=role(HOPPER))
    decision = run(broken, [cluster("a", h100(), l4())], [existing])
    (held,) = decision.replicas
    assert held.origin is Origin.HELD
    assert held.retained
    assert [(r.role, r.pool, r.workers) for r in held.roles] == [
        ("decode", "h100", 3),
        ("prefill", "l4", 1),
    ]
    assert held.roles[0].device_requests[0].selectors == ("old",)
    assert decision.condition.reason == Reason.INVALID_NODE_SELECTOR
    assert "spec.decode.nodeSelector.devices[0].selectors[0].cel" in decision.condition.message
    assert decision.trace == ()


def test_events() -> None:
    decision = run(
        deployment(3, decode=role(HOPPER), prefill=role(request("gpu", 1, "arch == Ada"))),
        [cluster("a", h100(), l4())],
        [replica("gone", 0)],
    )
    assert [(e.type, e.reason) for e in decision.events] == [
        (EventType.WARNING, Reason.INSUFFICIENT_CAPACITY),
        (EventType.NORMAL, Reason.REPLICA_REMOVED),
        (EventType.NORMAL, Reason.REPLICA_PLACED),
        (EventType.NORMAL, Reason.REPLICA_PLACED),
    ]
    assert decision.events[1].message == (
        "Removed replica model-gone-0 from cluster gone: cluster no longer exists"
    )
    assert decision.events[2].message.endswith("on cluster a (pool decode on h100, prefill on l4)")


def test_trace_lines_limit() -> None:
    clusters = [cluster(f"c{i}", l4()) for i in range(5)]
    decision = run(deployment(1), clusters)
    assert len(decision.trace_lines()) == 10
    limited = decision.trace_lines(limit=3)
    assert limited[-1] == "... and 7 more rejections"
    assert len(limited) == 4


def test_evaluation_cost_does_not_grow_with_clusters_sharing_a_class() -> None:
    counts: list[tuple[int, int]] = []
    for size in (3, 60):
        engine = FakeEngine()
        decision = run(
            deployment(size, request("gpu", 1, "arch == Hopper", "capacity.memory >= 40")),
            [cluster(f"c{i}", h100(), l4()) for i in range(size)],
            engine=engine,
        )
        assert decision.placed == size
        counts.append((engine.devices, engine.evaluations))
    assert counts[0] == counts[1] == (2, 3)


def test_clusters_parsed_apart_still_share_their_matches() -> None:
    # No interner: every cluster brings its own, content-equal hardware objects.
    engine = FakeEngine()
    clusters = [read_one_cluster(cluster(f"c{i}", h100(nodes=1 + i % 2), l4())) for i in range(40)]
    dep = read_dep(deployment(40, request("gpu", 1, "arch == Hopper", "boom")))
    decision = schedule(dep, clusters, [], engine=engine)
    assert decision.placed == 0
    assert len(decision.trace) == 40
    assert (engine.devices, engine.evaluations) == (2, 3)
    assert sorted(engine.compiled) == ["arch == Hopper", "boom"]


def test_same_inputs_same_decision() -> None:
    args = (
        deployment(7, request("gpu", 4, "arch == Hopper")),
        [cluster(f"c{i}", h100(nodes=i % 3)) for i in range(6)],
        [replica("c1", 0, deployment_name="other"), replica("c2", 4)],
    )
    assert run(*args) == run(*args)


def test_labels_say_where_a_replica_runs_but_identity_is_its_spec() -> None:
    (placed,) = run(deployment(1), [cluster("east", h100())]).replicas
    labels = placed.placement_labels("model")
    assert labels == {
        "modelplane.ai/deployment": "model",
        "modelplane.ai/cluster": "east",
        "modelplane.ai/replica-index": "0",
    }
    obj = replica("east", 0)
    obj["metadata"]["labels"] = {**labels, "modelplane.ai/cluster": "west"}
    obj["metadata"]["labels"]["modelplane.ai/deployment"] = "someone-else"
    (parsed,) = read_replicas(read_dep(deployment(1)), [obj])
    assert (parsed.owner, parsed.cluster, parsed.index) == ("model", "east", 0)
    assert placed.as_status() == {
        "name": placed.name,
        "cluster": "east",
        "index": 0,
        "pools": {"workers": "h100"},
    }


def test_every_selector_problem_is_reported() -> None:
    decision = run(
        deployment(
            1,
            request("gpu", 8, "arch ~ Hopper", "true"),
            request("nic", 1, "link ~ x"),
            cluster_selector={"matchExpressions": [{"key": "k", "operator": "In"}]},
        ),
        [cluster("a", h100())],
    )
    assert decision.condition.reason == Reason.INVALID_CLUSTER_SELECTOR
    message = decision.condition.message
    assert message.startswith("spec.clusterSelector.matchExpressions[0].values: must be non-empty")
    assert "spec.nodeSelector.devices[0].selectors[0].cel: cannot parse" in message
    assert "spec.nodeSelector.devices[1].selectors[0].cel: cannot parse" in message
    assert "selectors[1]" not in message
    assert decision.events[0].type is EventType.WARNING


def _replacing(nodes: int) -> Decision:
    """Two serving replicas on a cluster of `nodes` 8-GPU nodes, `maxSurge: 0`, and a
    device selector edit (a replacement, never an update in place)."""
    dep = deployment(2, request("gpu", 8, "capacity.memory >= 40"))
    dep["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    existing = [
        replica("a", i, "h100", claim("gpu", 8, "arch == Hopper"), serving=True) for i in (0, 1)
    ]
    return run(dep, [cluster("a", h100(nodes=nodes))], existing)


def test_a_replacement_within_max_unavailable_takes_a_free_node_at_once() -> None:
    """A node is free beside the two the old replicas hold: one old replica goes within
    maxUnavailable and its replacement is placed in the same decision."""
    decision = _replacing(nodes=3)
    assert len(decision.removed) == 1
    placed = [r for r in decision.replicas if r.origin is Origin.PLACED]
    assert [(r.cluster, r.index) for r in placed] == [("a", 2)]


def test_a_replacement_that_needs_the_old_replicas_devices_waits_for_them() -> None:
    """No free node: the old replica goes within maxUnavailable, and its replacement is
    placed once the node it holds until it is deleted is free (a later decision)."""
    decision = _replacing(nodes=2)
    assert len(decision.removed) == 1
    assert not [r for r in decision.replicas if r.origin is Origin.PLACED]
