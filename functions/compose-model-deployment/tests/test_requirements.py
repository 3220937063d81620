"""What the deployment asks Crossplane for: the clusters its clusterSelector can list by
label (else by name, else all of them), the clusters its replicas run on that the list
missed, and the replicas on each cluster fetched."""

from typing import Any

import pytest
from compose_model_deployment.fleet import (
    EVERY_CLUSTER,
    MAX_REPLICA_LISTS,
    Selection,
    cluster_selection,
)
from compose_model_deployment.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.xfn.structs import to_struct
from modelplane_cli.render import requirements as render_requirements
from modelplane_cli.render.world import World
from modelplane_dev.fuzz import final_response
from modelplane_dev.testing import as_dict, request, run

from .asked import fetched
from .objects import A0, B0, cluster, decided, deployment, observed_in_namespace, replica


def selecting(selector: Any) -> dict[str, Any]:
    obj = deployment(1)
    if selector is None:
        del obj["spec"]["clusterSelector"]
    else:
        obj["spec"]["clusterSelector"] = selector
    return obj


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param(None, EVERY_CLUSTER, id="no selector: every cluster"),
        pytest.param({}, EVERY_CLUSTER, id="an empty selector: every cluster"),
        pytest.param(
            {"matchLabels": {"tier": "production", "region": "eu"}},
            Selection(labels={"region": "eu", "tier": "production"}),
            id="matchLabels: listed by them",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]},
            Selection(labels={"tier": "gold"}),
            id="an In of one value is a label",
        ),
        pytest.param(
            {
                "matchLabels": {"tier": "production"},
                "matchExpressions": [
                    {"key": "region", "operator": "In", "values": ["eu", "us"]},
                    {"key": "gpu", "operator": "Exists"},
                ],
            },
            Selection(labels={"tier": "production"}),
            id="expressions a List cannot express narrow nothing; the labels still do",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["eu"]}]},
            EVERY_CLUSTER,
            id="only expressions a List cannot express: every cluster",
        ),
        pytest.param(
            {"matchLabels": {"modelplane.ai/cluster": "a", "tier": "production"}},
            Selection(name="a"),
            id="the implicit cluster label, which no object carries: a Get by name",
        ),
        pytest.param(
            {"matchLabels": {"tier": "not a label value!"}},
            EVERY_CLUSTER,
            id="an invalid selector: every cluster (the scheduler refuses it)",
        ),
        pytest.param(
            {"matchLabels": "tier"}, EVERY_CLUSTER, id="an unreadable selector: every cluster"
        ),
    ],
)
def test_cluster_selection(selector: Any, want: Selection) -> None:
    assert cluster_selection(selecting(selector)) == want


def test_an_unreadable_spec_elsewhere_keeps_the_narrow_list() -> None:
    broken = deployment(1)
    broken["spec"]["replicas"] = "three"
    assert cluster_selection(broken) == Selection(labels={"tier": "production"})


def _asked(rsp: dict[str, Any]) -> dict[str, Any]:
    return rsp["requirements"]["resources"]


def _labelled(kind: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": kind, "matchLabels": {"labels": labels}}


def _named(name: str) -> dict[str, Any]:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "matchName": name}


def test_a_cluster_the_list_missed_is_fetched_by_name_and_its_replicas_move() -> None:
    """Cluster b lost the label the deployment selects by: the list no longer holds it,
    so it is fetched by name; it still exists, so B0 moves make-before-break (kept
    while its replacement is placed on a) instead of being dropped as on a deleted
    cluster."""
    relabelled = cluster("b", 2)
    relabelled["metadata"]["labels"] = {"tier": "staging"}
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    first = as_dict(
        run(
            FunctionRunner(),
            request(decided(deployment(2)), required=fetched([cluster("a", 4)]), observed=running),
        )
    )
    # Both replicas serve, so the deployment is settled and also asks for its own
    # clusters by name (compose_model_deployment.settled); carrying the fleet, it
    # decides over it.
    asked = {
        "inferenceclusters": _labelled("InferenceCluster", {"tier": "production"}),
        "inferenceclusters/a": _named("a"),
        "inferenceclusters/b": _named("b"),
        # b's replicas are asked for with b: an empty list if b is gone.
        "modelreplicas/a": _labelled("ModelReplica", {"modelplane.ai/cluster": "a"}),
        "modelreplicas/b": _labelled("ModelReplica", {"modelplane.ai/cluster": "b"}),
        "priorityclasses": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"},
    }
    assert _asked(first) == asked
    # Not kept by Crossplane (it lacks keys it asks for): its requirements only.
    assert (first["desired"], "conditions" in first) == ({}, False)

    answer = {
        **fetched([cluster("a", 4)], list(running.values())),
        "inferenceclusters/a": [cluster("a", 4)],
        "inferenceclusters/b": [relabelled],
        "modelreplicas/b": [running[B0]],
    }
    settled = as_dict(
        run(FunctionRunner(), request(decided(deployment(2)), required=answer, observed=running))
    )
    assert _asked(settled) == asked  # the same: Crossplane's fetch loop ends
    resources = settled["desired"]["resources"]
    # B0 stays until its replacement on a serves; the replacement is placed now.
    assert B0 in resources
    placed = settled["desired"]["composite"]["resource"]["status"]["placements"]
    assert sorted(p["cluster"] for p in placed) == ["a", "a", "b"]


def test_a_cluster_gone_for_good_lets_its_replicas_go() -> None:
    """Fetched by name and not found: deleted, as with the whole fleet listed."""
    running = {
        A0: observed_in_namespace(replica(A0, "a", 0, serving=True)),
        B0: observed_in_namespace(replica(B0, "b", 0, serving=True)),
    }
    answer = {
        **fetched([cluster("a", 4)], list(running.values())),
        "inferenceclusters/b": [],
        "modelreplicas/b": [],
    }
    req = request(deployment(2), required=answer, observed=running)
    # The answer Crossplane keeps: cluster a is asked for by name too.
    got = as_dict(final_response(FunctionRunner(), req))
    assert B0 not in got["desired"]["resources"]


def test_the_implicit_cluster_label_asks_for_one_cluster_by_name() -> None:
    named = deployment(1)
    named["spec"]["clusterSelector"] = {"matchLabels": {"modelplane.ai/cluster": "b"}}
    got = as_dict(run(FunctionRunner(), request(named, required=fetched([cluster("b", 2)], []))))
    assert _asked(got)["inferenceclusters"] == _named("b")
    assert _asked(got)["modelreplicas/b"] == _labelled(
        "ModelReplica", {"modelplane.ai/cluster": "b"}
    )
    placed = got["desired"]["composite"]["resource"]["status"]["placements"]
    assert [p["cluster"] for p in placed] == ["b"]


def test_another_deployments_replica_on_a_listed_cluster_takes_its_capacity() -> None:
    """Cluster b's two nodes hold another deployment's replicas, found in b's list:
    both replicas land on a."""
    others = []
    for index in range(2):
        other = replica(f"other-{index}", "b", index)
        other["metadata"]["namespace"] = "team"
        other["metadata"]["labels"]["modelplane.ai/deployment"] = "other"
        other["spec"]["deploymentName"] = "other"
        others.append(other)
    got = as_dict(
        run(
            FunctionRunner(),
            request(deployment(2), required=fetched([cluster("a", 4), cluster("b", 2)], others)),
        )
    )
    placed = got["desired"]["composite"]["resource"]["status"]["placements"]
    assert [p["cluster"] for p in placed] == ["a", "a"]


# Asking for less decides the same: a deployment whose selector implies labels, answered
# as Crossplane answers (render's fetch over one world), places exactly as the same
# selector written so that it implies none (each label an `In` with a value no cluster
# carries beside it), for which the whole fleet is sent.

_TIERS = ["gold", "silver"]
_REGIONS = ["eu", "us"]


def _fleet_world(
    labels: list[tuple[str, str]], taken: list[int]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    clusters = []
    others = []
    for index, (tier, region) in enumerate(labels):
        name = f"c{index}"
        obj = cluster(name, 2)
        obj["metadata"]["labels"] = {"tier": tier, "region": region}
        clusters.append(obj)
        for node in range(min(taken[index], 2)):
            other = replica(f"other-{index}-{node}", name, node, serving=True)
            other["metadata"]["namespace"] = "team"
            other["metadata"]["labels"]["modelplane.ai/deployment"] = "other"
            other["spec"]["deploymentName"] = "other"
            others.append(other)
    return clusters, others


def _decide(world_objects: list[dict[str, Any]], composite: dict[str, Any]) -> dict[str, Any]:
    """The last response of one reconcile's fetch loop, answered from the world."""
    world = World(world_objects)
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(to_struct(composite))
    previous = None
    runner = FunctionRunner()
    for _ in range(6):
        rsp = run(runner, req)
        asked = rsp.requirements.SerializeToString(deterministic=True)
        if asked == previous:
            return as_dict(rsp)
        previous = asked
        req.ClearField("required_resources")
        for name, selector in rsp.requirements.resources.items():
            req.required_resources[name].ParseFromString(render_requirements.fetch(world, selector))
    raise AssertionError("requirements did not settle")


@settings(max_examples=25, deadline=None)
@given(
    labels=st.lists(
        st.tuples(st.sampled_from(_TIERS), st.sampled_from(_REGIONS)), min_size=1, max_size=6
    ),
    taken=st.lists(st.integers(0, 2), min_size=6, max_size=6),
    wanted=st.dictionaries(
        st.sampled_from(["tier", "region"]), st.sampled_from(_TIERS + _REGIONS), max_size=2
    ),
    replicas=st.integers(1, 4),
)
def test_the_narrowed_fleet_decides_as_the_whole_fleet(
    labels: list[tuple[str, str]], taken: list[int], wanted: dict[str, str], replicas: int
) -> None:
    clusters, others = _fleet_world(labels, taken)
    narrow = deployment(replicas)
    narrow["spec"]["clusterSelector"] = {"matchLabels": wanted}
    whole = deployment(replicas)
    whole["spec"]["clusterSelector"] = {
        "matchExpressions": [
            {"key": k, "operator": "In", "values": [v, "never-a-label"]}
            for k, v in sorted(wanted.items())
        ]
    }
    assert cluster_selection(whole) == EVERY_CLUSTER

    narrowed = _decide([*clusters, *others], narrow)
    everything = _decide([*clusters, *others], whole)

    def placed(rsp: dict[str, Any]) -> tuple[list[str], list[Any]]:
        status = rsp["desired"]["composite"]["resource"]["status"]
        return sorted(rsp["desired"].get("resources", {})), status["placements"]

    assert placed(narrowed) == placed(everything)


def test_past_the_cap_of_lists_every_replica_comes_in_one() -> None:
    """Each per-cluster list costs Crossplane a List that reads every replica: with
    more clusters listed than MAX_REPLICA_LISTS, one list of them all."""
    many = [cluster(f"c{i:03d}", 1) for i in range(MAX_REPLICA_LISTS + 1)]
    got = as_dict(run(FunctionRunner(), request(deployment(1), required=fetched(many))))
    asked = _asked(got)
    assert asked["modelreplicas"] == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
    }
    assert not any(key.startswith("modelreplicas/") for key in asked)
    at_cap = many[:MAX_REPLICA_LISTS]
    got = as_dict(run(FunctionRunner(), request(deployment(1), required=fetched(at_cap))))
    assert len([key for key in _asked(got) if key.startswith("modelreplicas/")]) == len(at_cap)
