"""Multi-round scenarios over the small test API in `support`."""

from __future__ import annotations

import signal
from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from crossplane.function import resource, response

from modelplane.core.vocabulary import ANNOTATION_COMPOSITION_RESOURCE_NAME, LABEL_COMPOSITE
from modelplane_cli.render import Apis, FunctionRegistry, NoAdmission, RenderResult, render
from modelplane_cli.schema import validate_builtin

from .support import (
    PARENT,
    ChildRunner,
    FakeFunction,
    ParentRunner,
    PlatformRunner,
    condition,
    default_runners,
    docs,
    find,
    observed_composite,
    one,
    render_text,
)

SETTINGS = """
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a}
data: {replicas: "3"}
"""
PLATFORM = """
apiVersion: example.org/v1
kind: XPlatform
metadata: {name: east, namespace: ignored}
spec: {region: us-east}
"""


def test_chain_converges_with_everything_ready(apis_dir: Path) -> None:
    result = render_text(apis_dir, PARENT)

    assert result.converged, result.errors
    assert result.ok
    parent = one(result, "XParent", "web")
    assert condition(parent, "Ready")["status"] == "True"
    assert condition(parent, "Synced") == {
        "type": "Synced",
        "status": "True",
        "reason": "ReconcileSuccess",
    }
    assert parent["status"]["readyChildren"] == 2
    children = find(result, "XChild")
    assert [c["metadata"]["name"] for c in children] == ["web-0", "web-1"]
    for child in children:
        assert child["metadata"]["namespace"] == "team-a"
        assert child["metadata"]["labels"][LABEL_COMPOSITE] == "web"
        assert child["metadata"]["ownerReferences"][0]["uid"] == parent["metadata"]["uid"]
        assert condition(child, "Ready")["status"] == "True"
        assert child["status"]["phase"] == "Serving"
    objects = find(result, "Object")
    assert len(objects) == 2
    for obj in objects:
        # Nested composites carry the root's name down in the composite label.
        assert obj["metadata"]["labels"][LABEL_COMPOSITE] == "web"
        assert obj["metadata"]["annotations"][ANNOTATION_COMPOSITION_RESOURCE_NAME] == "workload"
        assert obj["metadata"]["namespace"] == "team-a"
        assert obj["metadata"]["name"].startswith("web-")
        replicas = obj["spec"]["forProvider"]["manifest"]["spec"]["replicas"]
        assert replicas == 1
        assert type(replicas) is int
        assert condition(obj, "Ready")["status"] == "True"


def test_managed_resources_become_ready_one_round_after_they_appear(apis_dir: Path) -> None:
    # Round 1 composes the children, round 2 their Objects, round 3 sees the
    # Objects healthy (and the children, then the parent, ready), round 4 changes nothing.
    assert render_text(apis_dir, PARENT).rounds == 4
    stopped = render_text(apis_dir, PARENT, max_rounds=2)
    assert not stopped.converged
    assert any("did not converge within 2 rounds" in e for e in stopped.errors)
    for obj in find(stopped, "Object"):
        assert "status" not in obj
    assert condition(one(stopped, "XParent"), "Ready")["status"] == "False"


def test_required_resource_is_resolved_from_the_world(apis_dir: Path) -> None:
    settings = SETTINGS
    result = render_text(apis_dir, PARENT + settings)

    assert result.ok
    for obj in find(result, "Object"):
        assert obj["spec"]["forProvider"]["manifest"]["spec"]["replicas"] == 3
    assert not [e for e in result.events if e["type"] == "Warning"]


def test_requirement_that_finds_nothing_comes_back_present_and_empty(apis_dir: Path) -> None:
    result = render_text(apis_dir, PARENT)

    warnings = [e["message"] for e in result.events if e["type"] == "Warning"]
    assert warnings == [
        'Pipeline step "step-0": ConfigMap settings not found; using one replica per child'
    ]


def test_readiness_waits_for_every_composed_resource(apis_dir: Path) -> None:
    class NeverReadyChild(ChildRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            rsp.desired.resources["workload"].ready = fnv1.READY_UNSPECIFIED

    runners = {**default_runners(), "fn-child": NeverReadyChild()}
    text = PARENT.replace("children: 2", "children: 4")
    result = render_text(apis_dir, text, runners)

    assert result.converged
    child = one(result, "XChild", "web-0")
    assert condition(child, "Ready") == {
        "type": "Ready",
        "status": "False",
        "reason": "Creating",
        "message": "Unready resources: workload",
    }
    parent = one(result, "XParent")
    assert condition(parent, "Ready")["message"] == (
        "Unready resources: child-0, child-1, child-2, and 1 more"
    )
    assert condition(parent, "ChildrenReady")["status"] == "False"


def test_explicit_composite_readiness_supersedes_derived(apis_dir: Path) -> None:
    class HeldBack(ParentRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            rsp.desired.composite.ready = fnv1.READY_FALSE

    result = render_text(apis_dir, PARENT, {**default_runners(), "fn-parent": HeldBack()})

    assert condition(one(result, "XParent"), "Ready") == {
        "type": "Ready",
        "status": "False",
        "reason": "Creating",
    }


def test_a_composite_that_never_settles_does_not_converge(apis_dir: Path) -> None:
    class Counter(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            xr = observed_composite(request)
            seen = int(xr.get("status", {}).get("generation", 0))
            resource.update(rsp.desired.composite, {"status": {"generation": seen + 1}})

    result = render_text(apis_dir, PARENT, {"fn-parent": Counter()}, max_rounds=5)

    assert not result.converged
    assert result.rounds == 5
    assert one(result, "XParent")["status"]["generation"] == 5
    assert result.errors == ["the world did not converge within 5 rounds"]


def test_namespaced_composite_overrides_a_foreign_namespace_with_a_warning(
    apis_dir: Path,
) -> None:
    class Elsewhere(ChildRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            resource.update(
                rsp.desired.resources["workload"],
                {"metadata": {"namespace": "kube-system"}},
            )

    result = render_text(apis_dir, PARENT, {**default_runners(), "fn-child": Elsewhere()})

    assert result.ok
    assert {o["metadata"]["namespace"] for o in find(result, "Object")} == {"team-a"}
    warnings = [(e["reason"], e["message"]) for e in result.events if e["type"] == "Warning"]
    # Crossplane's reasonNamespaceOverridden and errFmtNamespaceOverridden.
    assert (
        "NamespaceOverridden",
        'cannot create composed resource "workload" in namespace "kube-system", using XR '
        'namespace "team-a" instead',
    ) in warnings


def test_namespaced_composite_cannot_compose_cluster_scoped_kinds(apis_dir: Path) -> None:
    class Clustered(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            resource.update(
                rsp.desired.resources["priority"],
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": "high"},
                    "value": 1000,
                },
            )

    result = render_text(apis_dir, PARENT, {"fn-parent": Clustered()})

    assert not result.ok
    assert find(result, "PriorityClass") == []
    synced = condition(one(result, "XParent"), "Synced")
    assert synced["status"] == "False"
    # Crossplane's errFmtNamespacedXRClusterResource.
    assert synced["message"] == (
        'cannot compose resources: cannot apply cluster scoped composed resource "priority" '
        "(a PriorityClass named high) for a namespaced composite resource."
    )


def test_an_object_controlled_by_another_composite_is_not_taken_over(apis_dir: Path) -> None:
    class Greedy(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            resource.update(
                rsp.desired.resources["shared"],
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "shared"},
                    "data": {"owner": "me"},
                },
            )
            rsp.desired.resources["shared"].ready = fnv1.READY_TRUE

    text = PARENT + "---" + PARENT.replace("name: web,", "name: api,")
    result = render_text(apis_dir, text, {"fn-parent": Greedy()})

    # "api" reconciles first and wins; "web"'s apply is refused (Invalid), which
    # Crossplane reports on that resource: a Warning, and Synced=False naming it.
    config_map = one(result, "ConfigMap", "shared")
    assert config_map["metadata"]["ownerReferences"][0]["name"] == "api"
    web = one(result, "XParent", "web")
    assert condition(web, "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": "Unsynced resources: shared",
    }
    assert any(
        e["type"] == "Warning"
        and e["involvedObject"]["name"] == "web"
        and e["message"]
        == 'cannot apply composed resource "shared": ConfigMap "shared" is invalid: '
        "existing ConfigMap team-a/shared is controlled by XParent api"
        for e in result.events
    )
    assert condition(one(result, "XParent", "api"), "Synced")["status"] == "True"


def test_generated_names_are_stable_and_kept(apis_dir: Path) -> None:
    first = render_text(apis_dir, PARENT)
    again = render_text(apis_dir, PARENT)

    names = sorted(o["metadata"]["name"] for o in find(first, "Object"))
    assert names == sorted(o["metadata"]["name"] for o in find(again, "Object"))
    assert all(len(n) == len("web-") + 12 for n in names)  # names.ChildName's 12 hex
    assert len(set(names)) == 2


def test_identical_events_fold_into_one_with_a_count(apis_dir: Path) -> None:
    class Chatty(ParentRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            response.normal(rsp, "hello")
            response.normal(rsp, "hello")

    result = render_text(apis_dir, PARENT, {**default_runners(), "fn-parent": Chatty()})

    hellos = [e for e in result.events if e["message"] == 'Pipeline step "step-0": hello']
    assert len(hellos) == 1
    assert hellos[0]["count"] == 2
    assert hellos[0]["involvedObject"]["name"] == "web"


def test_cluster_scoped_composite_composes_cluster_scoped_config(apis_dir: Path) -> None:
    text = PLATFORM
    result = render_text(apis_dir, text)

    assert result.ok
    platform = one(result, "XPlatform")
    assert "namespace" not in platform["metadata"]
    config = one(result, "ClusterProviderConfig", "east")
    assert "namespace" not in config["metadata"]
    # Provider configuration is applied, never given a provider's status.
    assert "status" not in config


def test_events_are_valid_v1_events(apis_dir: Path) -> None:
    # Warnings and Normals, on a namespaced and on a cluster-scoped composite (its
    # provider config left unready, so it gets a Normal `... is not yet ready`).
    class UnreadyPlatform(PlatformRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            rsp.desired.resources["provider-config"].ready = fnv1.READY_UNSPECIFIED

    runners = {**default_runners(), "fn-platform": UnreadyPlatform()}
    result = render_text(apis_dir, PARENT + "---" + PLATFORM, runners)

    assert {e["type"] for e in result.events} == {"Normal", "Warning"}
    assert {e["involvedObject"]["kind"] for e in result.events} >= {"XParent", "XPlatform"}
    for event in result.events:
        assert validate_builtin(event, "1.34") == [], event


def test_a_render_leaves_the_event_loop_without_its_result_being_formatted(
    apis_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`asyncio.run` formats its main task's repr, result included, when it puts
    SIGINT's handler back (CPython's `signal` looks the old handler up in an enum and
    builds the failed lookup's message): a fleet's world took 0.15-0.2 s, twice over."""
    formatted: list[RenderResult] = []

    def counted(result: RenderResult) -> str:
        formatted.append(result)
        return "RenderResult(...)"

    monkeypatch.setattr(RenderResult, "__repr__", counted)
    # asyncio.run installs its own handler only over the default one.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = render(
            docs(PARENT),
            Apis.load(apis_dir),
            FunctionRegistry(default_runners()),
            NoAdmission(),
            in_process=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)

    assert result.converged, result.errors
    assert formatted == []


def test_a_cluster_scoped_kind_given_a_namespace_is_created_then_refused(apis_dir: Path) -> None:
    # Crossplane checks the scope only when the desired resource has no namespace: the
    # first reconcile overrides the function's with the composite's and applies, and the
    # API server stores the cluster-scoped object without one. Every later reconcile
    # reads it back (a Get ignores the namespace of a cluster-scoped kind), keeps its
    # empty namespace ("maintain its name and namespace") and fails the check.
    class Clustered(FakeFunction):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            resource.update(
                rsp.desired.resources["priority"],
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": "high", "namespace": "team-a"},
                    "value": 1000,
                },
            )

    result = render_text(apis_dir, PARENT, {"fn-parent": Clustered()})

    assert condition(one(result, "XParent"), "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": "cannot compose resources: cannot apply cluster scoped composed resource "
        '"priority" (a PriorityClass named high) for a namespaced composite resource.',
    }
    priority = one(result, "PriorityClass", "high")
    assert "namespace" not in priority["metadata"]
    assert priority["metadata"]["labels"][LABEL_COMPOSITE] == "web"
