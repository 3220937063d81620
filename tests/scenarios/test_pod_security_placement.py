"""A team's template that asks for host access, rendered through the whole chain: the
fleet scheduler keeps it off every cluster whose tenants run Pod Security `baseline`,
KServe's included (whose namespaces only warn), and places it where the platform's
tenancy runs them `privileged`; an edit that asks for it later moves the replica there
make-before-break, never rolling it out in place."""

from typing import Any

from modelplane_cli.render import Document

from .fleets import Fleet, Renderer, find
from .manifests import h100_cluster, h100_model
from .test_model_cache import documents

Obj = dict[str, Any]
NAMESPACE = "team-a"
KSERVE = "  backend: {type: KServe}\n"
PRIVILEGED = "  tenancy:\n    labels: {pod-security.kubernetes.io/enforce: privileged}\n"
MODEL = "  model:\n    uri: hf://org/model\n"
FIELD = "spec.workers.template.spec.hostNetwork"


def namespace() -> str:
    return f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {NAMESPACE}}}\n"


def render(renderer: Renderer, text: str) -> Fleet:
    catalog = renderer.paths("catalog").objects
    fleet = renderer.documents([*(Document("catalog", o) for o in catalog), *documents(text)])
    assert fleet.result.ok, fleet.result.errors
    return fleet


def ask_host_network(objects: list[Obj]) -> None:
    spec = find(objects, "ModelDeployment", "chat")["spec"]["workers"]["template"]["spec"]
    spec["hostNetwork"] = True


def test_host_access_is_placed_only_where_the_platform_allows_it(renderer: Renderer) -> None:
    text = (
        namespace()
        + h100_cluster("a-kserve", 1, spec=KSERVE)
        + h100_cluster("b-native", 1)
        + h100_model("chat", NAMESPACE, spec=MODEL)
    )
    compliant = render(renderer, text)
    assert {r["spec"]["clusterName"] for r in compliant.all("ModelReplica")} == {"a-kserve"}

    # Asked for host access, it fits nowhere: it keeps running as it is, and says why.
    refused = compliant.edit(ask_host_network)
    assert refused.result.ok, refused.result.errors
    (kept,) = refused.all("ModelReplica")
    assert kept["spec"]["clusterName"] == "a-kserve"
    workload = [
        o["spec"]["forProvider"]["manifest"]
        for o in refused.all("Object")
        if o["spec"]["forProvider"]["manifest"]["kind"] == "LLMInferenceService"
    ]
    assert workload and all("hostNetwork" not in str(w) for w in workload)
    trace = refused.one("ModelDeployment", "chat")["status"]["matchTrace"]
    (entry,) = trace  # one entry for both clusters, refused alike
    assert (entry["clusterNames"], entry["reason"]) == (
        ["a-kserve", "b-native"],
        "PodSecurityViolation",
    )
    assert FIELD in entry["message"]
    scheduled = refused.condition("ModelDeployment", "chat", "ReplicasScheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "PodSecurityViolation")
    assert (
        f"the 2 selected clusters refuse its template: its tenant namespaces run Pod Security baseline: {FIELD}"
        in scheduled["message"]
    )
    progressing = refused.condition("ModelDeployment", "chat", "Progressing")
    assert progressing["status"] == "False", progressing

    # The platform runs b-native's tenants privileged: the replica moves there, and the
    # KServe one goes once its replacement serves.
    def allow_on_b(objects: list[Obj]) -> None:
        cluster = find(objects, "InferenceCluster", "b-native")
        cluster["spec"]["tenancy"] = {
            "labels": {"pod-security.kubernetes.io/enforce": "privileged"}
        }

    moved = refused.edit(allow_on_b)
    assert moved.result.converged and moved.result.ok, moved.result.errors
    (replica,) = moved.all("ModelReplica")
    assert replica["spec"]["clusterName"] == "b-native"
    (deployment,) = [
        o["spec"]["forProvider"]["manifest"]
        for o in moved.all("Object")
        if o["spec"]["forProvider"]["manifest"]["kind"] == "Deployment"
    ]
    assert deployment["spec"]["template"]["spec"]["hostNetwork"] is True
