"""A template the Pod Security baseline level refuses: kept off every cluster whose
tenant namespaces do not run `privileged`, whatever its backend, and moved off one
it already runs on."""

from typing import Any

import pytest

from modelplane.scheduling import Origin, Rejection

from .builders import Obj, cluster, deployment, h100, placements, replica, run

URI = "hf://org/model"
HOST_NETWORK = "spec.workers.template.spec.hostNetwork"


def with_host_network(dep: Obj) -> Obj:
    """The deployment, its engine on the node's network."""
    spec: dict[str, Any] = dep["spec"]
    template = {**spec["workers"]["template"]}
    template["spec"] = {**template["spec"], "hostNetwork": True}
    spec["workers"] = {**spec["workers"], "template": template}
    return dep


def enforcing(obj: Obj, level: str) -> Obj:
    """The cluster, its platform enforcing `level` in its tenant namespaces."""
    labels = {"pod-security.kubernetes.io/enforce": level}
    obj["spec"]["tenancy"] = {"labels": labels}
    return obj


@pytest.mark.parametrize("backend", ["Native", "KServe"])
def test_a_template_baseline_refuses_is_not_placed_on_a_default_cluster(backend: str) -> None:
    # KServe's tenant namespaces only warn at baseline: nothing on the cluster would stop it.
    fleet = [cluster("a", h100(2), backend=backend)]
    decision = run(with_host_network(deployment(1, model_uri=URI)), fleet)

    assert placements(decision) == []
    (entry,) = decision.match_trace()
    assert entry.reason == Rejection.POD_SECURITY_VIOLATION
    assert entry.message == (
        f"its tenant namespaces run Pod Security baseline: {HOST_NETWORK}: "
        "Pod Security baseline forbids host namespaces"
    )
    assert decision.condition.status is False
    assert (
        f"refuses its template: its tenant namespaces run Pod Security baseline: {HOST_NETWORK}"
        in (decision.condition.message)
    )


@pytest.mark.parametrize(("level", "placed"), [("privileged", True), ("restricted", False)])
def test_the_platform_s_enforced_level_decides(level: str, placed: bool) -> None:
    fleet = [enforcing(cluster("a", h100(2)), level)]
    decision = run(with_host_network(deployment(1)), fleet)

    assert placements(decision) == (["a/0:h100"] if placed else [])


def test_it_goes_where_the_platform_allows_host_access() -> None:
    fleet = [cluster("a", h100(2)), enforcing(cluster("b", h100(2)), "privileged")]
    decision = run(with_host_network(deployment(1)), fleet)

    assert placements(decision) == ["b/0:h100"]
    (entry,) = decision.match_trace()
    assert (entry.cluster, entry.reason) == ("a", Rejection.POD_SECURITY_VIOLATION)


def test_a_compliant_template_is_not_checked_against_any_level() -> None:
    decision = run(deployment(1, model_uri=URI), [cluster("a", h100(2), backend="KServe")])

    assert placements(decision) == ["a/0:h100"]
    assert decision.match_trace() == []


def test_a_template_edited_to_ask_for_host_access_is_never_rolled_out_in_place() -> None:
    """A replica serving on a default cluster, and the template edited to add
    hostNetwork: the update would reach its pods there, so the replica is replaced
    make-before-break on the cluster that allows it, and kept until then."""
    fleet = [cluster("a", h100(2)), enforcing(cluster("b", h100(2)), "privileged")]
    serving = replica("a", 0, serving=True)
    first = run(with_host_network(deployment(1)), fleet, [serving])

    assert [(r.cluster, r.origin) for r in first.replicas] == [
        ("a", Origin.PENDING),
        ("b", Origin.PLACED),
    ]
    assert first.removed == ()

    second = run(with_host_network(deployment(1)), fleet, [serving, replica("b", 0, serving=True)])
    assert placements(second) == ["b/0:h100"]
    (gone,) = second.removed
    assert (
        "its cluster cannot run it: its tenant namespaces run Pod Security baseline" in gone.reason
    )


def test_with_nowhere_to_go_the_running_replica_is_held() -> None:
    fleet = [cluster("a", h100(2), backend="KServe")]
    decision = run(
        with_host_network(deployment(1, model_uri=URI)), fleet, [replica("a", 0, serving=True)]
    )

    assert placements(decision) == ["a/0:h100"]
    assert decision.removed == ()
    assert decision.condition.status is False


def with_capability(dep: Obj, capability: str, container: str = "engine") -> Obj:
    """The deployment, `container` of its template (added beside the engine when it is
    not the engine) adding `capability`."""
    spec: dict[str, Any] = dep["spec"]
    template = spec["workers"]["template"]
    context = {"capabilities": {"add": [capability]}}
    containers = [
        {**c, "securityContext": context} if c["name"] == container else c
        for c in template["spec"]["containers"]
    ]
    if container != "engine":
        containers.append({"name": container, "image": "sidecar", "securityContext": context})
    spec["workers"] = {
        **spec["workers"],
        "template": {**template, "spec": {"containers": containers}},
    }
    return dep


TWO_NODES = {"tensor": 8, "data": 2, "dataLocal": 1}


@pytest.mark.parametrize(
    ("topology", "container", "on_kserve"),
    [
        # KServe's multi-node presets add IPC_LOCK to the engine themselves.
        (TWO_NODES, "engine", True),
        # A single-node engine gets no preset capabilities: it would gain one.
        (None, "engine", False),
        # Nor does any container but the engine.
        (TWO_NODES, "rdma-helper", False),
    ],
    ids=["multi-node-engine", "single-node-engine", "sidecar"],
)
def test_kserve_lets_a_template_repeat_what_its_presets_grant_the_engine(
    topology: Obj | None, container: str, on_kserve: bool
) -> None:
    dep = with_capability(deployment(1, model_uri=URI, topology=topology), "IPC_LOCK", container)
    fleet = [cluster("a-kserve", h100(4), backend="KServe"), cluster("b-native", h100(4))]
    decision = run(dep, fleet)

    placed = {p.split("/")[0] for p in placements(decision)}
    assert placed == ({"a-kserve"} if on_kserve else set())
    # Native clusters give no capabilities: b-native refuses it either way (alone, or
    # in one entry with a-kserve for the same words).
    (entry,) = decision.match_trace()
    assert entry.reason == Rejection.POD_SECURITY_VIOLATION
    assert entry.cluster == ("b-native" if on_kserve else "a-kserve")
    assert "adding capability IPC_LOCK" in (entry.message or "")
