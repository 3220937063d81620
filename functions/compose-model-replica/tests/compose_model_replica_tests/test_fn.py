"""compose-model-replica's refusals, as whole responses: each keeps what runs and
says why on Accepted, in-process and over a real gRPC channel."""

from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError

from modelplane.core.template_size import MAX_TEMPLATE_BYTES, template_bytes
from modelplane_dev.testing import as_dict, request, requirements_only, run, run_over_grpc

from .builders import OWNER, RUNNING, TEMPLATE, cluster, refused, replica, role


def unreadable_replica() -> dict[str, Any]:
    bad = replica()
    bad["spec"]["index"] = "first"
    return bad


def nested(levels: int) -> object:
    """`levels` objects, one inside the next."""
    value: object = "x"
    for _ in range(levels):
        value = {"n": value}
    return value


def deep_template_role(levels: int, pipeline: int = 1) -> dict[str, Any]:
    """A role whose engine container carries an unknown field `levels` objects deep:
    the pod spec then nests `levels` + 3 levels (spec, containers, the container)."""
    deep = role(pipeline=pipeline)
    engine = {"name": "engine", "image": "vllm", "x-deep": nested(levels)}
    deep["template"] = {**deep["template"], "spec": {"containers": [engine]}}
    return deep


def large_template_role(size: int) -> dict[str, Any]:
    """A role whose template is `size` bytes as compact JSON, an annotation padded."""
    large = role()

    def padded(pad: int) -> dict[str, Any]:
        metadata = {**large["template"].get("metadata", {}), "annotations": {"pad": "x" * pad}}
        return {**large["template"], "metadata": metadata}

    large["template"] = padded(size - template_bytes(padded(0)))
    assert template_bytes(large["template"]) == size
    return large


def deepest_spec_role(pipeline: int) -> dict[str, Any]:
    """A role whose pod spec nests the most it may, all in objects (a list level costs
    protobuf less): an unknown field 15 objects deep, under the spec."""
    deep = role(pipeline=pipeline)
    spec = {**deep["template"]["spec"], "x-deep": nested(15)}
    deep["template"] = {**deep["template"], "spec": spec}
    return deep


def nvlink_cluster(domain: int) -> dict[str, Any]:
    """A cluster whose h100 pool's class now declares NVLink domains of `domain` nodes."""
    obj = cluster()
    obj["status"]["gpuPools"][0]["nvlinkDomainNodes"] = domain
    return obj


def unreadable_cluster() -> dict[str, Any]:
    bad = cluster()
    bad["spec"]["backend"] = {"type": "Dynamo"}
    return bad


def owning(**spec: Any) -> dict[str, Any]:
    """The workers' role with `spec` in its pod template: fields the platform owns."""
    template = {**TEMPLATE, "spec": {**TEMPLATE["spec"], **spec}}
    return {**role(), "template": template}


REFUSALS = [
    pytest.param(
        request(replica(), observed=RUNNING, required={"inferencecluster": []}),
        refused(
            "FALSE",
            "ClusterNotFound",
            "spec.clusterName: InferenceCluster 'a' not found",
            kept=True,
        ),
        id="cluster deleted: keeps the running workload",
    ),
    pytest.param(
        request(replica(), required={"inferencecluster": [cluster(connected=False)]}),
        refused(
            "FALSE",
            "ClusterNotConnected",
            "InferenceCluster 'a' has no status.providerConfigRef yet",
            kept=False,
        ),
        id="cluster not connected yet",
    ),
    pytest.param(
        request(
            replica(workers=role(pool="a100")),
            observed=RUNNING,
            required={"inferencecluster": [cluster()]},
        ),
        refused(
            "FALSE",
            "PoolNotFound",
            "spec.workers.nodePoolName: pool 'a100' is not on InferenceCluster a (pools: h100)",
            kept=True,
        ),
        id="unknown pool: keeps the running workload",
    ),
    pytest.param(
        request(
            replica(workers=role(pipeline=4)),
            observed=RUNNING,
            required={"inferencecluster": [nvlink_cluster(2)]},
        ),
        refused(
            "FALSE",
            "InvalidSpec",
            "spec.workers.nodePoolName: the role spans 4 nodes, more than one NVLink domain of "
            "pool 'h100' on InferenceCluster a holds: its class's "
            "spec.topology.nvlinkDomainNodes is 2",
            kept=True,
        ),
        id="NVLink domains smaller than the role: keeps the running workload",
    ),
    pytest.param(
        request(unreadable_replica(), observed=RUNNING),
        # Read before anything is required: nothing is.
        refused(
            "FALSE",
            "InvalidSpec",
            "spec.index: Input should be a valid integer",
            kept=True,
            required=False,
        ),
        id="replica it cannot read: keeps the running workload",
    ),
    pytest.param(
        request(replica(workers=deep_template_role(14)), observed=RUNNING),
        # Read before anything is required: nothing is.
        refused(
            "FALSE",
            "InvalidSpec",
            "spec.workers.template.spec.containers[0].x-deep.n.n.n.n.n.n.n.n.n.n.n.n.n: nests "
            "deeper than 16 levels of objects and lists, counting spec.workers.template.spec "
            "as the first: the most a pod spec may have, so that every workload built from it "
            "stays readable to the functions that read it back",
            kept=True,
            required=False,
        ),
        id="pod spec nested 17 levels: keeps the running workload",
    ),
    pytest.param(
        request(replica(workers=large_template_role(MAX_TEMPLATE_BYTES + 1)), observed=RUNNING),
        refused(
            "FALSE",
            "InvalidSpec",
            f"spec.workers.template: is {MAX_TEMPLATE_BYTES + 1} bytes as JSON, more than the "
            f"{MAX_TEMPLATE_BYTES} a pod template may have: every replica copies it, and other "
            "teams' deployments read the replicas; put large configuration in a ConfigMap the "
            "template mounts",
            kept=True,
            required=False,
        ),
        id="pod template one byte over the bound: keeps the running workload",
    ),
    pytest.param(
        request(replica(), observed=RUNNING, required={"inferencecluster": [unreadable_cluster()]}),
        refused(
            "FALSE",
            "InvalidSpec",
            "spec.clusterName: InferenceCluster 'a' is invalid: "
            "spec.backend.type: Input should be 'Native' or 'KServe'",
            kept=True,
        ),
        id="cluster it cannot read: keeps the running workload",
    ),
    pytest.param(
        request(
            replica(model=None),
            observed=RUNNING,
            required={"inferencecluster": [cluster(backend="KServe")]},
        ),
        refused(
            "FALSE",
            "ModelURIRequired",
            "spec.model.uri: is required on InferenceCluster a: KServe downloads the weights "
            "from it; set spec.model.uri on the ModelDeployment",
            kept=True,
        ),
        id="no model URI for KServe: keeps the running workload",
    ),
    *(
        pytest.param(
            request(
                replica(workers=owning(**{field: value})),
                observed=RUNNING,
                required={"inferencecluster": [cluster()], "priorityclasses": []},
            ),
            refused(
                "FALSE",
                "InvalidSpec",
                f"spec.workers.template.spec.{field}: is set by Modelplane, not the template",
                kept=True,
            ),
            id=f"{field} in the template (priority admission derives it): keeps the workload",
        )
        for field, value in (("priority", 1000000), ("preemptionPolicy", "Never"))
    ),
]


@pytest.mark.parametrize(("req", "want"), REFUSALS)
def test_refusals_keep_what_runs(req: Any, want: dict[str, Any]) -> None:
    assert as_dict(run(FunctionRunner(), req)) == want


def test_broken_platform_template_keeps_what_runs() -> None:
    scheduling = {
        "provider": "KAI",
        # Renders to 66 characters: too long for the label KAI reads the queue from.
        "queue": "{{ .Namespace }}-{{ .Replica }}-{{ .Replica }}-{{ .Replica }}-{{ .Replica }}",
    }
    req = request(
        replica(),
        observed=RUNNING,
        required={"inferencecluster": [cluster(scheduling=scheduling)], "priorityclasses": []},
    )
    got = as_dict(run(FunctionRunner(), req))
    assert list(got["desired"]["resources"]) == ["workload-workers"]
    (accepted,) = got["conditions"]
    assert accepted["status"] == "STATUS_CONDITION_FALSE"
    assert accepted["reason"] == "InvalidSchedulingTemplate"
    assert "spec.scheduling.queue" in accepted["message"]


@pytest.mark.parametrize(("req", "want"), REFUSALS)
def test_same_response_over_grpc(req: Any, want: dict[str, Any]) -> None:
    """Served over a real gRPC channel on loopback, the function answers exactly as in-process."""
    assert as_dict(run_over_grpc(FunctionRunner(), req)) == want


def test_a_replica_no_deployment_controls_is_not_rendered() -> None:
    """Written by hand, a replica would skip placement, capacity and the allow-list."""
    forged = replica()
    forged["metadata"]["ownerReferences"] = [{**OWNER, "name": "someone-else"}]
    got = as_dict(run(FunctionRunner(), request(forged, observed=RUNNING)))
    assert list(got["desired"]["resources"]) == ["workload-workers"]
    (accepted,) = got["conditions"]
    assert (accepted["status"], accepted["reason"]) == (
        "STATUS_CONDITION_FALSE",
        "NotComposedByDeployment",
    )
    assert accepted["message"].startswith("metadata.ownerReferences: ")
    assert "requirements" not in got


def test_a_first_call_asks_for_its_cluster_and_nothing_else() -> None:
    """Never kept by Crossplane's fetch loop (the cluster is not fetched yet): the
    requirements and context only (design/required-resources.md)."""
    got = as_dict(run(FunctionRunner(), request(replica(), observed=RUNNING)))
    assert got == requirements_only(
        {
            "inferencecluster": {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "InferenceCluster",
                "matchName": "a",
            }
        }
    )


def test_a_refused_replica_keeps_publishing_where_it_is_reached() -> None:
    """A ModelEndpoint, and every route to the replica, follow status.url: a refusal
    (here, its cluster not found) must not take it away."""
    published = {
        "namespace": "mp-ml",
        "workloads": [{"role": "workers", "kind": "Deployment", "name": "x", "available": True}],
        "url": "http://gw.example/mp-ml/kimi-488f6e0d09",
    }
    for required in ({"inferencecluster": []},):
        req = request({**replica(), "status": published}, observed=RUNNING, required=required)
        got = as_dict(run(FunctionRunner(), req))
        assert got["desired"]["composite"]["resource"]["status"] == published


# The levels of objects by which the deepest copy of the deepest allowed pod spec stays
# under protobuf's decoding depth (design/deep-templates.md): 9 objects, 27 messages.
MARGIN_LEVELS = 9


def rendered(backend: str, pipeline: int, kind: str) -> list[dict[str, Any]]:
    """The `kind` Objects a replica whose pod spec nests 16 levels renders to, each as
    Crossplane hands it to the InferenceCluster's function: its manifest also read back
    into status.atProvider."""
    req = request(
        replica(workers=deepest_spec_role(pipeline)),
        required={"inferencecluster": [cluster(backend=backend)]},
    )
    got = as_dict(run(FunctionRunner(), req))
    (accepted,) = [c for c in got["conditions"] if c["type"] == "Accepted"]
    assert accepted["reason"] != "InvalidSpec", accepted["message"]
    found = [
        r["resource"]
        for r in got["desired"]["resources"].values()
        if r["resource"]["spec"]["forProvider"]["manifest"]["kind"] == kind
    ]
    assert found
    return [
        {**obj, "status": {"atProvider": {"manifest": obj["spec"]["forProvider"]["manifest"]}}}
        for obj in found
    ]


def listed_within(obj: dict[str, Any], levels: int) -> bytes:
    """A request fetching `obj` inside `levels` more objects, serialized."""
    wrapped: dict[str, Any] = obj
    for _ in range(levels):
        wrapped = {"w": wrapped}
    return request({}, required={"replica-objects": [wrapped]}).SerializeToString()


@pytest.mark.parametrize(
    ("backend", "pipeline", "kind"),
    [
        ("Native", 1, "Deployment"),
        ("Native", 2, "LeaderWorkerSet"),
        ("KServe", 1, "LLMInferenceService"),
        ("KServe", 2, "LLMInferenceService"),
    ],
)
def test_the_deepest_allowed_pod_spec_stays_readable_wherever_it_is_copied(
    backend: str, pipeline: int, kind: str
) -> None:
    """A pod spec of 16 levels renders, and every Object it is composed into still
    decodes in a fetched list with MARGIN_LEVELS objects more around it: the room the
    bound leaves for deeper wrapping."""
    for obj in rendered(backend, pipeline, kind):
        fnv1.RunFunctionRequest.FromString(listed_within(obj, MARGIN_LEVELS))


def test_the_margin_is_all_the_room_the_deepest_copy_has() -> None:
    """The deepest copy (a LeaderWorkerSet's) one object deeper than the margin does
    not decode: the test above measures the margin, not less."""
    (obj,) = rendered("Native", 2, "LeaderWorkerSet")
    with pytest.raises(DecodeError):
        fnv1.RunFunctionRequest.FromString(listed_within(obj, MARGIN_LEVELS + 1))
