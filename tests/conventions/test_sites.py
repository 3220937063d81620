"""Where the conventions write: the pod templates the shared walker finds, and no others."""

from typing import Any

import pytest

from modelplane.conventions import TemplateContext, apply_conventions

from .support import handed, read_scheduling, typed

CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", "batch")
KAI = {"provider": "KAI", "queue": "gold", "kai": {"queuesWithQuota": ["gold"]}}


def _run(spec: dict[str, Any], manifests: list[dict[str, Any]]) -> Any:
    config, issues = read_scheduling(spec)
    assert issues == []
    return apply_conventions(typed(manifests), config, CONTEXT)


def test_a_template_without_metadata_still_gets_the_platform_keys(build: Any) -> None:
    manifest = build.deployment()
    del manifest["spec"]["template"]["metadata"]
    (obj,) = handed(_run(KAI, [manifest]))
    template = obj["spec"]["template"]
    assert template["metadata"] == {"labels": {"kai.scheduler/queue": "gold"}}
    assert template["spec"]["schedulerName"] == "kai-scheduler"


def test_a_missing_template_is_not_invented(build: Any) -> None:
    """An LWS without its workerTemplate is left for the API server to reject."""
    manifest = build.lws(size=2)
    del manifest["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    (obj,) = handed(_run(KAI, [manifest]))
    lwt = obj["spec"]["leaderWorkerTemplate"]
    assert "workerTemplate" not in lwt
    assert lwt["leaderTemplate"]["spec"]["schedulerName"] == "kai-scheduler"


def test_kserve_pods_built_from_presets_still_get_the_platform_keys(build: Any) -> None:
    """A block with no template: KServe builds the pods from its presets, with the
    block's labels and annotations, so the platform keys go there all the same."""
    manifest = build.llmisvc()
    del manifest["spec"]["template"]
    (obj,) = handed(_run(KAI, [manifest]))
    assert obj["spec"]["labels"]["kai.scheduler/queue"] == "gold"


@pytest.mark.parametrize("labels", ["tier=gpu", ["x"], 7])
def test_malformed_workload_labels_never_raise(labels: object, build: Any) -> None:
    """The gang object copies Modelplane's labels from the workload; a labels
    field that is not a map has none to copy."""
    manifest = build.lws(size=2)
    manifest["metadata"]["labels"] = labels
    result = _run({"provider": "Coscheduling"}, [manifest])
    (group,) = result.gangs
    assert group["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "modelplane"}
    assert handed(result)[0]["metadata"]["labels"] == labels
