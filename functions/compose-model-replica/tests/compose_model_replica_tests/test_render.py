"""compose-model-replica's renders: the workloads per backend and scheduler, every
composed Object validated, readiness and Serving as the cluster answers."""

from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_cli.schema import ManifestValidator
from modelplane_dev.testing import as_dict, request, run

from .builders import GATEWAY, REPLICA, cluster, replica, role

# (backend, roles, provider) -> the workload kinds composed, by key.
SHAPES = [
    pytest.param(
        "Native",
        {"workers": role()},
        "Default",
        {"workload-workers": "Deployment"},
        id="native single-node",
    ),
    pytest.param(
        "Native",
        {"workers": role(pipeline=2)},
        "KAI",
        {"workload-workers": "LeaderWorkerSet"},
        id="native multi-node",
    ),
    pytest.param(
        "Native",
        {"decode": role(), "prefill": role(pipeline=2)},
        "Volcano",
        {"workload-decode": "Deployment", "workload-prefill": "LeaderWorkerSet"},
        id="native disaggregated",
    ),
    pytest.param(
        "KServe",
        {"workers": role(pipeline=2)},
        "Kueue",
        {"workload-workers": "LLMInferenceService"},
        id="kserve multi-node",
    ),
    pytest.param(
        "KServe",
        {"decode": role(), "prefill": role()},
        "Default",
        {"workload-decode": "LLMInferenceService"},
        id="kserve disaggregated",
    ),
    pytest.param(
        "Native",
        {"workers": role(pipeline=2)},
        "Coscheduling",
        {"workload-workers": "LeaderWorkerSet"},
        id="coscheduling gang",
    ),
]


# The traffic objects a replica composes, by backend and whether its cluster has a Gateway.
PICKER = {
    "picker-deployment": "Deployment",
    "picker-role": "Role",
    "picker-rolebinding": "RoleBinding",
    "picker-service": "Service",
    "picker-serviceaccount": "ServiceAccount",
}
TRAFFIC = {
    ("Native", False): {"service": "Service"},
    ("Native", True): {
        "service": "Service",
        "inference-pool": "InferencePool",
        "route": "HTTPRoute",
        **PICKER,
    },
    ("KServe", False): {},
    ("KServe", True): {"route": "HTTPRoute"},
}


@pytest.mark.parametrize("gateway", [False, True], ids=["service", "gateway"])
@pytest.mark.parametrize(("backend", "roles", "provider", "kinds"), SHAPES)
def test_renders_and_validates(
    backend: str,
    roles: dict[str, Any],
    provider: str,
    kinds: dict[str, str],
    gateway: bool,
    manifest_validator: ManifestValidator,
) -> None:
    scheduling = {"provider": provider, "defaultPriority": "inference"}
    if provider in ("KAI", "Kueue", "Volcano"):
        scheduling["queue"] = "{{ .Namespace }}"
    on = cluster(backend, scheduling, gateway=GATEWAY if gateway else None)
    req = request(
        replica(**roles),
        required={"inferencecluster": [on], "priorityclasses": []},
    )
    got = as_dict(run(FunctionRunner(), req))
    resources = got["desired"]["resources"]
    workloads = {
        key: value["resource"]["spec"]["forProvider"]["manifest"]["kind"]
        for key, value in resources.items()
        if key.startswith("workload-")
    }
    assert workloads == kinds
    assert "namespace" in resources
    traffic = {
        key: value["resource"]["spec"]["forProvider"]["manifest"]["kind"]
        for key, value in resources.items()
        if key.startswith(("service", "inference-pool", "route", "picker-"))
    }
    expected = dict(TRAFFIC[backend, gateway])
    if backend == "Native" and "prefill" in roles:
        expected["service-prefill"] = "Service"
    assert traffic == expected
    for key, value in resources.items():
        obj = {
            **value["resource"],
            "metadata": {**value["resource"]["metadata"], "namespace": "ml"},
        }
        assert manifest_validator.validate(obj) == [], key
        assert value["ready"] == "READY_FALSE"
    accepted, serving = got["conditions"]
    # Composed, not yet applied: the cluster has not answered.
    assert (accepted["type"], accepted["status"]) == ("Accepted", "STATUS_CONDITION_UNKNOWN")
    assert (serving["type"], serving["status"]) == ("Serving", "STATUS_CONDITION_FALSE")
    if provider == "Coscheduling":
        assert any(key.startswith("gang-") for key in resources)


def _applied_and_available(first: dict[str, Any]) -> dict[str, Any]:
    """The Objects of a first response as provider-kubernetes reports them once applied,
    with each workload read back available (every pod updated and up)."""
    observed: dict[str, Any] = {}
    for key, value in first["desired"]["resources"].items():
        obj = value["resource"]
        manifest = obj["spec"]["forProvider"]["manifest"]
        pods = manifest.get("spec", {}).get("replicas", 1)
        status = {
            "availableReplicas": pods,
            "updatedReplicas": pods,
            "conditions": [{"type": "Available", "status": "True"}],
        }
        observed[key] = {
            **obj,
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "Synced", "status": "True"},
                ],
                "atProvider": {"manifest": {**manifest, "status": status}},
            },
        }
    return observed


def test_a_changed_workload_is_not_serving_until_it_is_applied() -> None:
    """The replica's spec changed (a new image): its Objects still carry the old
    manifest, and their status describes what ran, so the replica is not serving the
    spec it has now. A fleet rollout counts it as down from this moment."""
    cluster_ = {"inferencecluster": [cluster()]}
    first = as_dict(run(FunctionRunner(), request(replica(), required=cluster_)))
    observed = _applied_and_available(first)
    bumped = replica()
    template = bumped["spec"]["workers"]["template"]
    bumped["spec"]["workers"]["template"] = {
        **template,
        "spec": {
            **template["spec"],
            "containers": [{**template["spec"]["containers"][0], "image": "vllm/vllm-openai:v2"}],
        },
    }

    unchanged = as_dict(
        run(FunctionRunner(), request(replica(), observed=observed, required=cluster_))
    )
    changed = as_dict(run(FunctionRunner(), request(bumped, observed=observed, required=cluster_)))

    serving = {c["type"]: c for c in unchanged["conditions"]}["Serving"]
    assert serving["status"] == "STATUS_CONDITION_TRUE"
    serving = {c["type"]: c for c in changed["conditions"]}["Serving"]
    assert (serving["status"], serving["reason"]) == (
        "STATUS_CONDITION_FALSE",
        "WorkloadNotAvailable",
    )
    assert serving["message"] == "workload-workers: the change is not applied to the cluster yet"


def test_serving_once_the_workload_is_available() -> None:
    first = as_dict(
        run(FunctionRunner(), request(replica(), required={"inferencecluster": [cluster()]}))
    )
    observed: dict[str, Any] = {}
    for key, value in first["desired"]["resources"].items():
        obj = value["resource"]
        manifest = obj["spec"]["forProvider"]["manifest"]
        # As the Deployment controller reports it once every pod is updated and up.
        pods = manifest.get("spec", {}).get("replicas", 1)
        atprovider = {
            **manifest,
            "status": {
                "availableReplicas": pods,
                "updatedReplicas": pods,
                "conditions": [{"type": "Available", "status": "True"}],
            },
        }
        observed[key] = {
            **obj,
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "Synced", "status": "True"},
                ],
                "atProvider": {"manifest": atprovider},
            },
        }
    got = as_dict(
        run(
            FunctionRunner(),
            request(replica(), observed=observed, required={"inferencecluster": [cluster()]}),
        )
    )
    assert {value["ready"] for value in got["desired"]["resources"].values()} == {"READY_TRUE"}
    accepted, serving = got["conditions"]
    assert (accepted["status"], accepted["reason"]) == ("STATUS_CONDITION_TRUE", "WorkloadApplied")
    assert (serving["type"], serving["status"], serving["reason"]) == (
        "Serving",
        "STATUS_CONDITION_TRUE",
        "WorkloadAvailable",
    )
    status = got["desired"]["composite"]["resource"]["status"]
    assert status["workloads"] == [
        {"role": "workers", "kind": "Deployment", "name": f"{REPLICA}-workers", "available": True}
    ]
    assert status["namespace"] == "mp-ml"


def test_same_input_same_bytes() -> None:
    req = request(
        replica(workers=role(pipeline=2)), required={"inferencecluster": [cluster("KServe")]}
    )
    first = run(FunctionRunner(), req).SerializeToString(deterministic=True)
    assert run(FunctionRunner(), req).SerializeToString(deterministic=True) == first


def test_an_apply_the_cluster_refuses_is_named() -> None:
    first = as_dict(
        run(FunctionRunner(), request(replica(), required={"inferencecluster": [cluster()]}))
    )
    observed = {
        key: {
            **value["resource"],
            "status": {
                "conditions": [
                    {"type": "Synced", "status": "True"}
                    if key != "workload-workers"
                    else {
                        "type": "Synced",
                        "status": "False",
                        "reason": "ReconcileError",
                        "message": "admission webhook denied the request",
                    }
                ]
            },
        }
        for key, value in first["desired"]["resources"].items()
    }
    got = as_dict(
        run(
            FunctionRunner(),
            request(replica(), observed=observed, required={"inferencecluster": [cluster()]}),
        )
    )
    accepted = got["conditions"][0]
    assert (accepted["status"], accepted["reason"], accepted["message"]) == (
        "STATUS_CONDITION_FALSE",
        "WorkloadRejected",
        "workload-workers: admission webhook denied the request",
    )


@pytest.mark.parametrize(
    "status", [["not", "a", "map"], {"atProvider": "x"}, {"atProvider": {"manifest": 7}}]
)
def test_observed_objects_of_any_shape_read_as_not_serving(status: object) -> None:
    observed = {"workload-workers": {"apiVersion": "v1", "kind": "Object", "status": status}}
    got = as_dict(
        run(
            FunctionRunner(),
            request(replica(), observed=observed, required={"inferencecluster": [cluster()]}),
        )
    )
    assert "results" not in got
    serving = got["conditions"][1]
    assert (serving["type"], serving["status"], serving["message"]) == (
        "Serving",
        "STATUS_CONDITION_FALSE",
        "Deployment has not been observed yet",
    )
