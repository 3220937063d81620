"""What the user docs tell people to write agrees with what Modelplane renders."""

import re
from pathlib import Path
from typing import Any

from modelplane.conventions.template import parse_template
from modelplane.core.vocabulary import LABEL_TENANT_NAMESPACE
from modelplane_cli import yamlio
from modelplane_cli.schema import ManifestValidator

from .cli import EXAMPLES, Fleet, modelplane

DOCS = Path(__file__).resolve().parents[2] / "docs"
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
    assert all(n["metadata"]["labels"] == namespace["metadata"]["labels"] for n in tenant), (
        "the guide's Namespace must carry what Modelplane composes, or the two fight over it"
    )
    assert namespace["metadata"]["labels"][LABEL_TENANT_NAMESPACE] == "team-a"
    assert (EXAMPLES / "schedulers" / "kueue").is_dir()
