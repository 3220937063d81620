"""What the user docs tell people to write agrees with what Modelplane renders."""

import re
from pathlib import Path
from typing import Any

from modelplane.cel import device_from_spec, evaluate
from modelplane.conventions.template import parse_template
from modelplane.core.charts import RELEASE_ROLLBACK_LIMIT
from modelplane.core.vocabulary import LABEL_TENANT_NAMESPACE
from modelplane_cli import yamlio
from modelplane_cli.schema import ManifestValidator, SchemaRegistry

from .cli import EXAMPLES, Fleet, modelplane

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def _yaml_blocks(page: Path) -> list[Any]:
    blocks = re.findall(r"```yaml\n(.*?)```", page.read_text(), flags=re.DOTALL)
    return [doc for block in blocks for doc in yamlio.load_all(block) if doc is not None]


def test_the_kueue_guide_puts_the_local_queue_where_the_workloads_land(
    tmp_path: Path, manifest_validator: ManifestValidator
) -> None:
    docs = _yaml_blocks(DOCS / "schedulers" / "kueue.md")
    (scheduling,) = [d["spec"]["scheduling"] for d in docs if "scheduling" in d.get("spec", {})]
    (queue,) = [d for d in docs if d.get("kind") == "LocalQueue"]
    (namespace,) = [d for d in docs if d.get("kind") == "Namespace"]
    assert manifest_validator.validate(queue) == []
    assert manifest_validator.validate(namespace) == []

    # The guide's scheduling block, rendered for a team-a deployment on the Kueue example.
    fleet = Fleet(tmp_path / "kueue", "catalog", "schedulers/models.yaml", "schedulers/kueue")
    fleet.replace(
        "schedulers/kueue/clusters.yaml",
        'queue: "{{ .Namespace }}-local"',
        f'queue: "{scheduling["queue"]}"',
        count=2,
    )
    run = modelplane("render", fleet.root, "-o", "yaml")
    assert run.code == 0, run.err
    workloads = [
        o["spec"]["forProvider"]["manifest"]
        for o in run.objects
        if o["kind"] == "Object"
        and QUEUE_LABEL in o["spec"]["forProvider"]["manifest"]["metadata"].get("labels", {})
    ]
    assert workloads
    # Every ModelDeployment of the example is in namespace team-a.
    expected = parse_template(scheduling["queue"]).render({"Namespace": "team-a"})
    for workload in workloads:
        labels = workload["metadata"]["labels"]
        assert labels[QUEUE_LABEL] == expected
        # Kueue finds a LocalQueue by name in the workload's own namespace.
        assert workload["metadata"]["namespace"] == queue["metadata"]["namespace"]
        assert labels[QUEUE_LABEL] == queue["metadata"]["name"]
    tenant = [
        o["spec"]["forProvider"]["manifest"]
        for o in run.objects
        if o["kind"] == "Object" and o["spec"]["forProvider"]["manifest"]["kind"] == "Namespace"
    ]
    assert {n["metadata"]["name"] for n in tenant} == {namespace["metadata"]["name"]}
    # The guide shows a Native cluster's Namespace; a KServe cluster's carries other
    # Pod Security labels (warn and audit, not enforce), which the guide says.
    guide = namespace["metadata"]["labels"]
    assert guide in [n["metadata"]["labels"] for n in tenant], (
        "the guide's Namespace must carry what Modelplane composes, or the two fight over it"
    )
    assert all(
        _without_pod_security(n["metadata"]["labels"]) == _without_pod_security(guide)
        for n in tenant
    )
    assert namespace["metadata"]["labels"][LABEL_TENANT_NAMESPACE] == "team-a"
    assert (EXAMPLES / "schedulers" / "kueue").is_dir()


def test_the_model_deployment_reference_example_matches_an_h100() -> None:
    """The reference's selectors hold on the catalog's H100 (81559Mi usable), and the
    example deployment is admitted: what a reader copies works."""
    deployment = _yaml_blocks(DOCS / "api" / "modeldeployment.md")[0]
    (h100,) = [
        d
        for d in yamlio.load_all((EXAMPLES / "catalog" / "classes.yaml").read_text())
        if d is not None and d["metadata"]["name"] == "h100-8x"
    ]
    (gpu,) = [d for d in h100["spec"]["devices"] if d["name"] == "gpu"]
    device = device_from_spec(gpu)

    selectors = [
        s["cel"]
        for request in deployment["spec"]["nodeSelector"]["devices"]
        for s in request["selectors"]
    ]
    assert selectors
    assert all(evaluate(expression, device) is True for expression in selectors)
    assert gpu["count"] >= deployment["spec"]["nodeSelector"]["devices"][0]["count"]
    registry = SchemaRegistry.from_files(sorted((REPO / "apis").glob("*/definition.yaml")))
    schema = registry.get(deployment["apiVersion"], deployment["kind"])
    assert schema is not None
    assert schema.admit(deployment)[1] == []


def test_the_serving_guide_writes_what_the_serving_example_runs() -> None:
    """The guide's objects are the example's, and the shares it shows are what renders."""
    page = DOCS / "guides" / "serving-behind-one-address.md"
    docs = _yaml_blocks(page)
    example = [
        doc
        for path in sorted((EXAMPLES / "serving").glob("*.yaml"))
        for doc in yamlio.load_all(path.read_text())
        if doc is not None
    ]

    def one(objects: list[Any], kind: str, name: str) -> Any:
        (found,) = [o for o in objects if o.get("kind") == kind and o["metadata"]["name"] == name]
        return found

    assert one(docs, "ModelService", "chat")["spec"] == one(example, "ModelService", "chat")["spec"]
    assert (
        one(docs, "InferenceGateway", "fleet")["spec"]
        == one(example, "InferenceGateway", "fleet")["spec"]
    )
    cluster = one(docs, "InferenceCluster", "serve-us-east")["spec"]
    assert cluster == one(example, "InferenceCluster", "serve-us-east")["spec"]
    (fragment,) = [d for d in docs if set(d) == {"spec"}]
    deployment = one(example, "ModelDeployment", "qwen-h100")["spec"]
    assert fragment["spec"]["model"] == deployment["model"]
    assert fragment["spec"]["workers"]["template"] == deployment["workers"]["template"]

    run = modelplane("render", EXAMPLES / "catalog", EXAMPLES / "serving")
    assert run.code == 0, run.err
    shown = re.search(r"```text\n(.*?)```", page.read_text(), flags=re.DOTALL)
    assert shown is not None
    for line in shown.group(1).splitlines():
        if line.startswith(("qwen", "external", "chat-team/chat")):
            # The guide elides the gateway host in URLs; the rest of each row is what renders.
            head = line.split("http://...")[0].rstrip()
            assert head in run.out, head


def _without_pod_security(labels: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if not k.startswith("pod-security.kubernetes.io/")}


def test_the_cluster_guide_states_how_often_a_failed_release_is_retried() -> None:
    # provider-helm stops retrying a failed release after `rollbackLimit` attempts and
    # then reports it up to date until its spec changes: the guide says both.
    guide = " ".join((DOCS / "guides" / "creating-clusters.md").read_text().split())
    assert f"is retried up to {RELEASE_ROLLBACK_LIMIT} times" in guide
    assert "stays failed until its spec changes" in guide
