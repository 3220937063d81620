"""The renderer's output handed to every scheduler convention: all of it validates.

The convention tests feed hand-built workloads; these feed what `render_replica`
really emits, so every kind either package puts on a workload cluster (Namespace,
ResourceClaimTemplate, Deployment, LeaderWorkerSet, LLMInferenceService and the
three PodGroups) is checked against its CRD or the Kubernetes schema as composed.
"""

from dataclasses import replace
from typing import Any

import pytest
from modelplane_models.inference_cluster import Scheduling

from modelplane.conventions import TemplateContext, apply_conventions, parse_scheduling
from modelplane.workloads import render_replica
from modelplane_cli.schema import ManifestValidator

from .inputs import read_cluster, read_replica

PIPELINE = {"tensor": 8, "pipeline": 2}
DATA = {"tensor": 4, "data": 4, "dataLocal": 2}

# One block per way of handing pods over, the gang-composing ones included.
BLOCKS: dict[str, dict[str, Any]] = {
    "Default": {"provider": "Default"},
    "KAI": {"provider": "KAI", "queue": "{{ .Namespace }}", "kai": {"queuesWithQuota": ["ml"]}},
    "Kueue": {
        "provider": "Kueue",
        "queue": "{{ .Namespace }}-gpu",
        "kueue": {"workloadPriorityClasses": ["production-critical"]},
    },
    "Volcano": {"provider": "Volcano", "queue": "{{ .Namespace }}"},
    "Volcano-Modelplane": {
        "provider": "Volcano",
        "queue": "{{ .Namespace }}",
        "volcano": {"lwsGangScheduling": False},
    },
    "Coscheduling": {"provider": "Coscheduling"},
}
# The PodGroup each gang-composing block yields for a multi-node worker.
GANG_API = {
    "Volcano-Modelplane": "scheduling.volcano.sh/v1beta1",
    "Coscheduling": "scheduling.x-k8s.io/v1alpha1",
}


def _replica(build: Any, shape: str) -> dict[str, Any]:
    # The longest replica name there is: every derived name is at its limit.
    name = "kimi-k2-" + "r" * 55
    if shape == "unified-multi-node":
        return build.replica(name=name, workers=build.role(count=2, topology=PIPELINE))
    if shape == "disaggregated":
        return build.replica(
            name=name,
            decode=build.role(topology=PIPELINE),
            prefill=build.role(count=2, topology=DATA, pool="l4"),
        )
    return build.replica(name=name, workers=build.role(count=3))


@pytest.mark.parametrize("shape", ["unified-single-node", "unified-multi-node", "disaggregated"])
@pytest.mark.parametrize("backend", ["Native", "KServe"])
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_rendered_and_conventioned_objects_validate(
    build: Any, manifest_validator: ManifestValidator, block: str, backend: str, shape: str
) -> None:
    obj = _replica(build, shape)
    rendered = render_replica(read_replica(obj), read_cluster(build.cluster(backend=backend)))
    config, parse_issues = parse_scheduling(Scheduling.model_validate(BLOCKS[block]))
    assert parse_issues == []
    context = TemplateContext(
        namespace="ml",
        name=obj["spec"]["deploymentName"],
        replica=obj["metadata"]["name"],
        cluster=obj["spec"]["clusterName"],
        priority=obj["spec"]["priority"],
    )
    result = apply_conventions(rendered.workloads, config, context)

    # Rendered names fit every scheduler's limits, so no convention refuses them.
    assert result.ok, result.issues
    # Handed back by key, each workload as it was rendered but for the conventions.
    assert [w.key for w in result.workloads] == [w.key for w in rendered.workloads]
    handed = replace(rendered, workloads=tuple(result.workloads))
    for manifest in [*(o.manifest for o in handed.objects()), *result.gangs]:
        assert manifest_validator.validate(manifest, pods=True) == [], manifest["kind"]

    multi_node = shape != "unified-single-node"
    expected = GANG_API.get(block) if multi_node else None
    assert {o["apiVersion"] for o in result.gangs} == ({expected} if expected else set())
    if expected:
        # A unified replica is one gang. A disaggregated one is too where the
        # scheduler has sub-groups (KAI, Volcano); Coscheduling gangs each role apart.
        apart = shape == "disaggregated" and block == "Coscheduling"
        assert len(result.gangs) == (2 if apart else 1)
