"""The shared safety net: never raise, never drop what was composed before."""

import gc
from typing import Any

import pytest
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, ModelDeployment, ModelReplica
from pydantic import BaseModel

from modelplane.core.issues import InvalidInputError
from modelplane.xfn import report, required
from modelplane.xfn.required import require_named
from modelplane.xfn.runner import (
    ComposeFunction,
    Waiting,
    keep_observed,
    observed_composite,
    published,
)
from modelplane.xfn.structs import to_dict
from modelplane_dev.testing import as_dict, request, run

COMPOSITE = {"apiVersion": "example.org/v1", "kind": "XThing", "metadata": {"name": "x"}}
CHILD: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelReplica",
    "metadata": {
        "name": "kimi-0",
        "namespace": "ml",
        "labels": {"app": "kimi"},
        "uid": "0b9c",
        "resourceVersion": "42",
        "ownerReferences": [{"kind": "ModelDeployment", "name": "kimi"}],
    },
    "spec": {
        "clusterName": "a",
        "crossplane": {"resourceRefs": [{"kind": "Object", "name": "o"}]},
    },
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


class Exploding(ComposeFunction):
    validity_condition = "Valid"

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        rsp.desired.resources["half"].resource.update({"kind": "Half"})
        raise KeyError("spec")


class KeepsEverything(ComposeFunction):
    validity_condition = "Valid"

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        keep_observed(req, rsp)


def test_an_exception_is_a_fatal_result_that_changes_nothing() -> None:
    got = as_dict(run(Exploding(), request(COMPOSITE, observed={"child": CHILD})))
    assert got["results"] == [
        {
            "severity": "SEVERITY_FATAL",
            "reason": "InternalError",
            "message": "internal error: KeyError: 'spec'",
            "target": "TARGET_COMPOSITE",
        }
    ]
    # Nothing half-built leaks out: a fatal result stops Crossplane before it applies.
    assert "half" not in got.get("desired", {}).get("resources", {})


def test_keep_observed_re_emits_only_what_the_parent_owns() -> None:
    rsp = run(KeepsEverything(), request(COMPOSITE, observed={"child": CHILD}))
    kept = to_dict(rsp.desired.resources["child"].resource)
    assert kept == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "kimi-0", "namespace": "ml", "labels": {"app": "kimi"}},
        "spec": {"clusterName": "a"},
    }


class ReadsAModel(ComposeFunction):
    validity_condition = "Valid"

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        require_named(rsp, "cluster", "modelplane.ai/v1alpha1", "InferenceCluster", "a")
        observed_composite(req, ModelReplica)
        rsp.desired.resources["new"].resource.update({"kind": "New"})


def test_unreadable_input_is_a_condition_and_keeps_what_was_composed() -> None:
    bad = {**CHILD, "spec": {"index": "first", "clusterName": 7}, "metadata": {"name": ["x"]}}
    req = request(bad, observed={"child": CHILD}, required={"cluster": []})
    got = as_dict(run(ReadsAModel(), req))
    paths = ["metadata.name", "spec.clusterName", "spec.deploymentName", "spec.index"]
    assert [c["type"] for c in got["conditions"]] == ["Valid"]
    assert got["conditions"][0]["status"] == "STATUS_CONDITION_FALSE"
    assert got["conditions"][0]["reason"] == "InvalidSpec"
    assert [r["message"].split(":")[0] for r in got["results"]] == paths
    assert all(r["severity"] == "SEVERITY_WARNING" for r in got["results"])
    # What was composed stays; nothing the failed compose began leaks out.
    assert sorted(got["desired"]["resources"]) == ["child"]
    # What it required stays required, so Crossplane's fetch loop settles.
    assert got["requirements"] == {
        "resources": {
            "cluster": {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "InferenceCluster",
                "matchName": "a",
            }
        }
    }


class AsksThenFails(ComposeFunction):
    validity_condition = "Valid"
    published_status = ("pools", "ref")

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        assert not gc.isenabled(), "compose runs with the cyclic collector paused"
        response.require_resources(rsp, "things", "v1", "Thing")
        rsp.desired.composite.resource.update({"status": {"pools": []}})
        observed_composite(req, ModelReplica)


def test_unreadable_input_keeps_requirements_and_published_status() -> None:
    composite = {**CHILD, "spec": {"index": "first"}, "status": {"pools": [{"a": 1}], "ref": "x"}}
    composite["status"]["other"] = "not published by this function"
    req = request(composite, observed={"child": CHILD}, required={"things": []})
    got = as_dict(run(AsksThenFails(), req))
    assert got["requirements"] == {"resources": {"things": {"apiVersion": "v1", "kind": "Thing"}}}
    # Re-published as observed, not as the failed compose had begun to set them.
    # Re-published as observed, and not Ready: its validity condition is False.
    assert got["desired"]["composite"] == {
        "resource": {"status": {"pools": [{"a": 1}], "ref": "x"}},
        "ready": "READY_FALSE",
    }
    assert sorted(got["desired"]["resources"]) == ["child"]
    assert gc.isenabled()


def test_keep_observed_tolerates_what_no_api_server_would_hold() -> None:
    odd = {"apiVersion": "v1", "kind": "Odd", "metadata": "name", "spec": ["not", "a", "map"]}
    rsp = run(KeepsEverything(), request(COMPOSITE, observed={"odd": odd}))
    assert to_dict(rsp.desired.resources["odd"].resource) == {
        "apiVersion": "v1",
        "kind": "Odd",
        "metadata": {},
        "spec": ["not", "a", "map"],
    }


class InvalidButHarmless(ComposeFunction):
    """A function whose validity condition says nothing about readiness."""

    validity_condition = "Valid"
    unready_when_invalid = False

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        keep_observed(req, rsp)
        report.set_condition(rsp, report.Condition("Valid", False, "InvalidSpec", "bad edit"))


READY_CHILD = {**CHILD, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
UNREADY_CHILD = {**CHILD, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
NEW_CHILD = {key: value for key, value in CHILD.items() if key != "status"}


def test_what_is_kept_stays_as_ready_as_it_is() -> None:
    """Crossplane counts unspecified readiness as not ready, so a kept resource's
    readiness comes from its own Ready condition, not from the request."""
    req = request(COMPOSITE, observed={"up": READY_CHILD, "down": UNREADY_CHILD, "new": NEW_CHILD})
    got = as_dict(run(KeepsEverything(), req))["desired"]["resources"]
    assert {key: value["ready"] for key, value in got.items()} == {
        "up": "READY_TRUE",
        "down": "READY_FALSE",
        "new": "READY_FALSE",
    }


def test_readiness_follows_validity_unless_the_function_says_otherwise() -> None:
    got = as_dict(run(InvalidButHarmless(), request(COMPOSITE, observed={"up": READY_CHILD})))
    assert "ready" not in got["desired"].get("composite", {})
    assert got["desired"]["resources"]["up"]["ready"] == "READY_TRUE"


class AsksThenWaits(ComposeFunction):
    validity_condition = "Valid"
    waiting_condition = "Routed"
    published_status = ("pools", "ref")

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        response.require_resources(rsp, "things", "v1", "Thing")
        rsp.desired.resources["new"].resource.update({"apiVersion": "v1", "kind": "New"})
        raise Waiting("waiting for things", reason="ThingsNotReady")


def test_waiting_holds_what_runs_keeps_what_was_asked_and_says_what_it_awaits() -> None:
    """Fetched but not usable yet: what was composed and published stays, and the
    requirements stay asked for, so Crossplane's fetch loop settles."""
    composite = {**CHILD, "status": {"pools": [{"a": 1}], "ref": "x", "other": "y"}}
    req = request(composite, observed={"child": CHILD}, required={"things": []})
    got = as_dict(run(AsksThenWaits(), req))
    assert got["requirements"] == {"resources": {"things": {"apiVersion": "v1", "kind": "Thing"}}}
    assert got["desired"]["composite"] == {
        "resource": {"status": {"pools": [{"a": 1}], "ref": "x"}}
    }
    assert sorted(got["desired"]["resources"]) == ["child", "new"]
    assert got["conditions"] == [
        {
            "type": "Routed",
            "status": "STATUS_CONDITION_UNKNOWN",
            "reason": "ThingsNotReady",
            "message": "waiting for things",
            "target": "TARGET_COMPOSITE",
        }
    ]


class WaitsOnAFalseCondition(ComposeFunction):
    validity_condition = "Valid"

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        raise Waiting("the gateway is gone", status=False, reason="GatewayNotFound")


def test_waiting_reports_on_the_validity_condition_unless_told_otherwise() -> None:
    got = as_dict(run(WaitsOnAFalseCondition(), request(CHILD)))
    (condition,) = got["conditions"]
    assert condition["type"] == "Valid"
    assert condition["status"] == "STATUS_CONDITION_FALSE"
    assert condition["reason"] == "GatewayNotFound"


def test_published_status_is_every_status_field_but_the_conditions() -> None:
    assert published(ModelReplica) == ("namespace", "servingRevision", "url", "workloads")
    assert "conditions" not in published(ModelDeployment)
    assert set(published(InferenceCluster)) == {
        "capacity",
        "gateway",
        "gpuPools",
        "kubernetesVersion",
        "providerConfigRef",
        "reachability",
        "stack",
    }
    with pytest.raises(TypeError):
        published(NoStatus)


class NoStatus(BaseModel):
    spec: dict[str, str] | None = None


class Returns(ComposeFunction):
    """Asks for `things`, composes, and ends as `outcome` says."""

    validity_condition = "Valid"
    outcome = "return"

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        response.require_resources(rsp, "things", "v1", "Thing")
        rsp.desired.resources["new"].resource.update({"apiVersion": "v1", "kind": "New"})
        report.set_condition(rsp, report.Condition("Valid", True, "Fine", "composed"))
        if self.outcome == "waiting":
            raise Waiting("waiting for things", reason="ThingsNotReady")
        if self.outcome == "invalid":
            raise InvalidInputError.at("spec.x", "is wrong")
        if self.outcome == "unfetched":
            required.stop_unless_fetched(req, rsp)


OUTCOMES = ["return", "waiting", "invalid", "unfetched"]
THINGS = {"resources": {"things": {"apiVersion": "v1", "kind": "Thing"}}}


def returning(outcome: str) -> Returns:
    runner = Returns()
    runner.outcome = outcome
    return runner


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_a_call_lacking_a_required_key_answers_its_requirements_and_context_only(
    outcome: str,
) -> None:
    """Whatever the compose did, Crossplane never keeps this call: the answer is the
    SDK's empty one (the tag, the TTL, the desired state handed in, the context) and
    the requirements."""
    req = request(CHILD, observed={"child": CHILD})
    req.context.update({"modelplane.ai/now": "2026-01-01T00:00:00Z"})
    req.desired.resources["earlier"].resource.update({"kind": "FromAnEarlierStep"})
    got = as_dict(run(returning(outcome), req))
    assert got == {
        "meta": {"tag": "test", "ttl": "60s"},
        "desired": {"resources": {"earlier": {"resource": {"kind": "FromAnEarlierStep"}}}},
        "context": {"modelplane.ai/now": "2026-01-01T00:00:00Z"},
        "requirements": THINGS,
    }


@pytest.mark.parametrize("outcome", ["return", "waiting", "invalid"])
def test_a_key_fetched_empty_goes_the_whole_way(outcome: str) -> None:
    """An empty list is an answer (nothing matched, or `render --faults`' missing
    resource): that call may be the one Crossplane keeps."""
    req = request(CHILD, observed={"child": CHILD}, required={"things": []})
    got = as_dict(run(returning(outcome), req))
    assert got["requirements"] == THINGS
    assert got["conditions"], got
    assert "child" in got["desired"]["resources"] or outcome == "return"


class ExplodesAfterAsking(ComposeFunction):
    validity_condition = "Valid"

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        response.require_resources(rsp, "things", "v1", "Thing")
        raise KeyError("spec")


def test_a_fatal_result_is_kept_even_when_a_key_is_missing() -> None:
    """Crossplane returns a fatal result at once, before comparing requirements."""
    got = as_dict(run(ExplodesAfterAsking(), request(CHILD)))
    assert [r["severity"] for r in got["results"]] == ["SEVERITY_FATAL"]
