"""compose-inference-cluster's stack for the replicas placed on it: in-cluster
queues, Usages protecting what a replica needs, tenancy, chart overrides and
the gateway class, plus every stack's Releases against provider-helm's CRD."""

from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .stack_objects import (
    ABSENT,
    INSTALLED_BEFORE_DRIVER,
    KUEUE,
    LWS,
    LWS_CRD,
    MANAGED,
    NAME,
    OBSERVERS,
    READY,
    REQUIRED,
    SYSTEM,
    Obj,
    cluster,
    condition,
    placed,
)


def test_placed_replicas_name_their_queues_and_protect_what_they_need() -> None:
    obj = cluster(MANAGED, scheduling=KUEUE, tenancy={"namespace": "serve-{{ .Namespace }}"})
    req = request(
        obj,
        required={**REQUIRED, "modelreplicas": [placed("chat-1", pipeline=2)]},
        observed={f"release-{n}": READY for n in ("lws", "kueue", "nvidia-dra-driver-gpu")},
    )
    got = as_dict(run(FunctionRunner(), req))
    resources = got["desired"]["resources"]
    queue = resources["observe-localqueue-serve-team-a-team-a-gpu"]["resource"]
    assert queue["spec"]["forProvider"]["manifest"] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a-gpu", "namespace": "serve-team-a"},
    }
    priority = resources["observe-priorityclass-inference"]["resource"]
    assert priority["spec"]["forProvider"]["manifest"]["metadata"] == {"name": "inference"}
    # A multi-node replica on a Native cluster needs the DRA driver, LWS and Kueue.
    protected = {
        key: (r["resource"]["metadata"]["namespace"], r["resource"]["spec"]["of"]["resourceRef"])
        for key, r in resources.items()
        if key.startswith("usage-replica-")
    }
    assert protected == {
        f"usage-replica-{name}-team-a-chat-1": (
            "team-a",
            {"name": f"{NAME}-{name}", "namespace": SYSTEM},
        )
        for name in ("kueue", "lws", "nvidia-dra-driver-gpu")
    }
    by = resources["usage-replica-lws-team-a-chat-1"]["resource"]["spec"]["by"]
    assert by == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "resourceRef": {"name": "chat-1"},
    }


def test_an_unreadable_replica_keeps_what_it_protects_and_what_observes_its_queue() -> None:
    obj = cluster(MANAGED, scheduling=KUEUE)
    before = as_dict(
        run(
            FunctionRunner(),
            request(
                obj,
                required={**REQUIRED, "modelreplicas": [placed("chat-1")]},
                observed={f"release-{n}": READY for n in ("lws", "kueue", "nvidia-dra-driver-gpu")},
            ),
        )
    )["desired"]["resources"]
    unreadable = placed("chat-1")
    unreadable["spec"]["index"] = "first"
    observed = {key: value["resource"] for key, value in before.items()}
    got = as_dict(
        run(
            FunctionRunner(),
            request(obj, required={**REQUIRED, "modelreplicas": [unreadable]}, observed=observed),
        )
    )["desired"]["resources"]
    assert set(before) <= set(got)
    assert "observe-localqueue-mp-team-a-team-a-gpu" in got


def test_an_invalid_tenancy_is_named_and_keeps_the_queues_observed() -> None:
    obj = cluster(scheduling=KUEUE)
    req = request(obj, required={**REQUIRED, "modelreplicas": [placed("chat-1")]})
    queue_key = "observe-localqueue-mp-team-a-team-a-gpu"
    first = as_dict(run(FunctionRunner(), req))["desired"]["resources"]
    assert queue_key in first
    obj["spec"]["tenancy"] = {"namespace": "{{ .Name }}"}
    got = as_dict(
        run(
            FunctionRunner(),
            request(
                obj,
                required={**REQUIRED, "modelreplicas": [placed("chat-1")]},
                observed={queue_key: first[queue_key]["resource"]},
            ),
        )
    )
    tenancy = next(c for c in got["conditions"] if c["type"] == "TenancyConfigured")
    assert tenancy["status"] == "STATUS_CONDITION_FALSE"
    assert tenancy["reason"] == "InvalidTenancy"
    assert tenancy["message"].startswith("spec.tenancy.namespace: {{ .Name }} differs")
    assert got["desired"]["resources"][queue_key]["resource"] == first[queue_key]["resource"]


def test_an_override_for_a_component_the_cluster_does_not_install_is_a_warning() -> None:
    req = request(
        cluster({"mode": "Managed", "versions": {"kserve": "v0.20.1"}}), required=REQUIRED
    )
    got = as_dict(run(FunctionRunner(), req))
    assert got["results"] == [
        {
            "severity": "SEVERITY_WARNING",
            "reason": "StackFieldIgnored",
            "message": "spec.stack.versions[kserve]: KServe LLMInferenceService is not installed "
            "on this cluster; the override does nothing",
            "target": "TARGET_COMPOSITE",
        }
    ]
    stack = next(c for c in got["conditions"] if c["type"] == "StackReady")
    assert stack["reason"] == "InstallingStack"


def test_an_override_pins_the_chart() -> None:
    req = request(
        cluster({"mode": "Managed", "versions": {"leaderWorkerSet": "0.9.1"}}), required=REQUIRED
    )
    got = as_dict(run(FunctionRunner(), req))
    chart = got["desired"]["resources"]["release-lws"]["resource"]["spec"]["forProvider"]["chart"]
    assert chart["version"] == "0.9.1"


def test_what_an_installing_release_brings_is_progress_not_a_fault() -> None:
    observed = {
        **INSTALLED_BEFORE_DRIVER,
        "release-lws": LWS,  # composed, not Ready yet
        f"observe-customresourcedefinition-{LWS_CRD}": {
            **OBSERVERS[f"observe-customresourcedefinition-{LWS_CRD}"],
            **ABSENT,
        },
    }
    got = as_dict(
        run(FunctionRunner(), request(cluster(MANAGED), required=REQUIRED, observed=observed))
    )
    stack = next(c for c in got["conditions"] if c["type"] == "StackReady")
    assert stack == condition(
        "StackReady",
        "UNKNOWN",
        "InstallingStack",
        "installing: lws, nvidia-dra-driver-gpu; missing until then: CustomResourceDefinition "
        f"{LWS_CRD} (needed by multi-node replicas)",
    )
    # New multi-node replicas are still kept away meanwhile.
    missing = got["desired"]["composite"]["resource"]["status"]["stack"]["missing"]
    assert [m["name"] for m in missing] == [LWS_CRD]


@pytest.mark.parametrize("backend", ["Native", "KServe"])
@pytest.mark.parametrize("provider", ["Default", "KAI", "Kueue", "Volcano", "Coscheduling"])
def test_every_release_of_every_stack_validates_against_provider_helm(
    backend: str, provider: str, manifest_validator: Any
) -> None:
    """Installed to the end (each round's Releases reported Ready), every Release and
    Usage is composed, and every Release is valid for provider-helm's CRD."""
    obj = cluster(MANAGED, backend={"type": backend}, scheduling={"provider": provider})
    got: Obj = as_dict(run(FunctionRunner(), request(obj, required=REQUIRED)))
    resources: dict[str, Obj] = got["desired"]["resources"]
    for _ in range(5):
        observed = {key: {**value["resource"], **READY} for key, value in resources.items()}
        got = as_dict(run(FunctionRunner(), request(obj, required=REQUIRED, observed=observed)))
        resources = got["desired"]["resources"]
    stack = next(c for c in got["conditions"] if c["type"] == "StackReady")
    assert stack["reason"] == "StackComplete", stack
    releases = [v["resource"] for k, v in resources.items() if k.startswith("release-")]
    assert len(releases) >= 3
    for release in releases:
        assert manifest_validator.validate(release) == [], release["metadata"]["name"]
    # Every ordering edge is a Usage between two composed Releases.
    names = {r["metadata"]["name"] for r in releases}
    for key, value in resources.items():
        if key.startswith("usage-") and not key.startswith("usage-replica-"):
            spec = value["resource"]["spec"]
            assert spec["of"]["resourceRef"]["name"] in names
            assert spec["by"]["resourceRef"]["name"] in names


def test_the_gateway_class_is_read_only_where_the_model_declares_it() -> None:
    """`spec.gateway` belongs to the traffic path; until the XRD declares it the
    generated model has no such field and no gateway is assumed."""
    from types import SimpleNamespace

    from compose_inference_cluster.stack import gateway_class
    from modelplane_models import InferenceCluster

    from modelplane.core.issues import parse_object

    assert gateway_class(parse_object(InferenceCluster, cluster())) is None
    declared = InferenceCluster.model_construct(
        spec=SimpleNamespace(gateway=SimpleNamespace(gatewayClassName="eg"))
    )
    assert gateway_class(declared) == "eg"
