"""The Kubernetes Workload API (gang.api: Workload): the version each release serves,
one gang per disaggregated replica, and what cannot join it."""

from typing import Any

import pytest
from modelplane_models.inference_cluster import Scheduling

from modelplane.conventions import TemplateContext, apply_conventions, parse_scheduling
from modelplane.conventions.workload_api import served_version
from modelplane.core.kinds import pod_sites
from modelplane_cli.schema import ManifestValidator

from .support import handed, typed

CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", None)
WORKLOAD = {"gang": {"api": "Workload"}}


def _parse(block: dict[str, Any], version: str | None) -> Any:
    return parse_scheduling(Scheduling.model_validate(block), version)


def _pd(build: Any, prefill: int = 2, decode: int = 1) -> list[dict[str, Any]]:
    return [
        build.deployment("kimi-0-prefill", "prefill", replicas=prefill),
        build.deployment("kimi-0-decode", "decode", replicas=decode),
    ]


def _validator(manifest_validator: ManifestValidator, version: str) -> ManifestValidator:
    return ManifestValidator(manifest_validator.registry, version)


@pytest.mark.parametrize(
    ("version", "served"),
    [
        ("1.34", None),
        ("1.35", "v1alpha1"),
        ("1.36", "v1alpha2"),
        ("1.37", "v1beta1"),
        ("1.38", None),
    ],
)
def test_each_release_serves_its_own_version(version: str, served: str | None) -> None:
    assert served_version(version) == served


def test_v1alpha1_workload_gangs_a_pd_replica(
    build: Any, manifest_validator: ManifestValidator
) -> None:
    config, issues = _parse(WORKLOAD, "1.35")
    assert issues == []
    result = apply_conventions(typed(_pd(build)), config, CONTEXT)
    assert result.issues == []
    (workload,) = result.gangs
    validator = _validator(manifest_validator, "1.35")
    assert validator.validate(workload) == []
    assert workload["apiVersion"] == "scheduling.k8s.io/v1alpha1"
    assert workload["kind"] == "Workload"
    assert workload["metadata"]["namespace"] == "ml-team"
    # One all-or-nothing group: both roles' pods, 2 prefill + 1 decode.
    assert workload["spec"] == {
        "podGroups": [{"name": "replica", "policy": {"gang": {"minCount": 3}}}]
    }
    for manifest in handed(result):
        assert validator.validate(manifest) == []
        (site,) = pod_sites(manifest)
        for _, spec in site.specs:
            assert spec["workloadRef"] == {
                "name": workload["metadata"]["name"],
                "podGroup": "replica",
            }


@pytest.mark.parametrize(
    ("version", "ref"),
    [
        (
            "1.36",
            lambda w: {
                "podGroupTemplateRef": {
                    "workload": {"workloadName": w, "podGroupTemplateName": "replica"}
                }
            },
        ),
        ("1.37", lambda w: {"workloadRef": {"workloadName": w, "templateName": "replica"}}),
    ],
)
def test_later_versions_compose_the_pod_group_the_pods_join(
    version: str, ref: Any, build: Any, manifest_validator: ManifestValidator
) -> None:
    config, _ = _parse(WORKLOAD, version)
    result = apply_conventions(typed(_pd(build, prefill=3, decode=2)), config, CONTEXT)
    assert result.issues == []
    group, workload = sorted(result.gangs, key=lambda o: o["kind"])
    validator = _validator(manifest_validator, version)
    assert validator.validate(group) == []
    assert validator.validate(workload) == []
    name = workload["metadata"]["name"]
    policy = {"gang": {"minCount": 5}}
    assert workload["spec"] == {
        "podGroupTemplates": [{"name": "replica", "schedulingPolicy": policy}]
    }
    assert group["spec"] == {**ref(name), "schedulingPolicy": policy}
    for manifest in handed(result):
        assert validator.validate(manifest) == []
        (site,) = pod_sites(manifest)
        for _, spec in site.specs:
            assert spec["schedulingGroup"] == {"podGroupName": group["metadata"]["name"]}


def test_a_replica_of_one_role_has_nothing_to_gang(build: Any) -> None:
    config, _ = _parse(WORKLOAD, "1.35")
    result = apply_conventions(typed([build.deployment(replicas=4)]), config, CONTEXT)
    assert (result.gangs, result.issues) == ([], [])
    assert "workloadRef" not in handed(result)[0]["spec"]["template"]["spec"]


@pytest.mark.parametrize("kind", ["lws", "llmisvc"])
def test_a_crd_whose_pod_template_cannot_carry_the_reference_is_reported(
    kind: str, build: Any
) -> None:
    config, _ = _parse(WORKLOAD, "1.35")
    manifest = (
        build.lws(size=4)
        if kind == "lws"
        # Disaggregated, single-pod workers: a gang of the replica is wanted.
        else build.llmisvc(
            role="decode",
            main=build.kserve_block(worker=False),
            prefill=build.kserve_block(worker=False, replicas=2),
        )
    )
    result = apply_conventions(typed([manifest]), config, CONTEXT)
    assert result.gangs == []
    assert result.issues, "an ungated multi-pod worker must be reported"
    for issue in result.issues:
        assert (issue.severity, issue.reason, issue.path) == (
            "Warning",
            "GangLimited",
            "spec.scheduling.gang.api",
        )
        assert "workloadRef" in issue.message
    for site in pod_sites(handed(result)[0]):
        for _, spec in site.specs:
            assert "workloadRef" not in spec


def test_a_pd_replica_gangs_what_it_can_and_reports_the_rest(build: Any) -> None:
    config, _ = _parse(WORKLOAD, "1.35")
    manifests = [
        build.deployment("kimi-0-prefill", "prefill", replicas=2),
        build.lws("kimi-0-decode", "decode", size=2),
    ]
    result = apply_conventions(typed(manifests), config, CONTEXT)
    (workload,) = result.gangs
    assert workload["spec"]["podGroups"][0]["policy"]["gang"]["minCount"] == 2
    (issue,) = result.issues
    assert issue.reason == "GangLimited"
    assert "LeaderWorkerSet kimi-0-decode" in issue.message


@pytest.mark.parametrize("version", ["1.34", "1.38"])
def test_a_version_that_serves_no_workload_api_is_a_warning_naming_the_field(
    version: str, build: Any
) -> None:
    config, issues = _parse(WORKLOAD, version)
    (issue,) = issues
    assert (issue.severity, issue.reason, issue.path) == (
        "Warning",
        "GangAPIUnavailable",
        "spec.scheduling.gang.api",
    )
    assert f"Kubernetes {version}" in issue.message
    assert config.workload_api is None
    # Nothing that runs is touched: the pods are rendered, just not ganged.
    result = apply_conventions(typed(_pd(build)), config, CONTEXT)
    assert result.ok
    assert result.gangs == []


@pytest.mark.parametrize(
    "block",
    [
        {"provider": "KAI", "gang": {"api": "Workload"}},
        {"gang": {"api": "Workload", "enabled": False}},
    ],
)
def test_workload_api_is_ignored_with_a_warning_where_it_cannot_apply(
    block: dict[str, Any],
) -> None:
    config, issues = _parse(block, "1.35")
    assert config.workload_api is None
    assert [(i.severity, i.reason, i.path) for i in issues] == [
        ("Warning", "SchedulingFieldIgnored", "spec.scheduling.gang.api")
    ]


def test_the_workload_is_deterministic_and_named_per_replica(build: Any) -> None:
    config, _ = _parse(WORKLOAD, "1.36")
    first = apply_conventions(typed(_pd(build)), config, CONTEXT)
    again = apply_conventions(typed(_pd(build)), config, CONTEXT)
    other = apply_conventions(
        typed(_pd(build)), config, TemplateContext("ml-team", "kimi", "kimi-1", "prod-east", None)
    )
    assert first.gangs == again.gangs
    names = {o["metadata"]["name"] for o in first.gangs}
    assert names.isdisjoint({o["metadata"]["name"] for o in other.gangs})


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize(
    "shape",
    [
        "deployment-unified",
        "deployment-disaggregated",
        "lws-unified",
        "lws-disaggregated",
        "lws-disaggregated-mixed",
        "llmisvc-unified-single",
        "llmisvc-unified-multi",
        "llmisvc-disaggregated",
        "llmisvc-disaggregated-mixed",
    ],
)
def test_every_shape_gets_a_valid_gang_or_a_reason(
    shape: str, version: str, build: Any, manifest_validator: ManifestValidator
) -> None:
    """Every Deployment pod that needs a gang joins the one Workload, whose minimum is
    all of them; every other unit that needs one is reported; all of it validates."""
    manifests, _ = build.shapes[shape]()
    config, _ = _parse(WORKLOAD, version)
    result = apply_conventions(typed(manifests), config, CONTEXT)
    assert result.ok
    validator = _validator(manifest_validator, version)
    for obj in [*handed(result), *result.gangs]:
        assert validator.validate(obj) == [], obj["kind"]
    roles = {m["metadata"]["labels"]["modelplane.ai/role"] for m in manifests}
    roles |= {"prefill" for m in manifests if "prefill" in m["spec"]}
    disaggregated = len(roles) > 1
    joined = [m for m in handed(result) if m["kind"] == "Deployment" and disaggregated]
    workloads = [g for g in result.gangs if g["kind"] == "Workload"]
    assert len(workloads) == (1 if joined else 0)
    if joined:
        policy = (
            workloads[0]["spec"]["podGroups"][0]["policy"]
            if version == "1.35"
            else workloads[0]["spec"]["podGroupTemplates"][0]["schedulingPolicy"]
        )
        assert policy["gang"]["minCount"] == sum(m["spec"]["replicas"] for m in joined)
        field = "workloadRef" if version == "1.35" else "schedulingGroup"
        for manifest in joined:
            assert field in manifest["spec"]["template"]["spec"]
    reported = [i for i in result.issues if i.reason == "GangLimited"]
    ungated = [
        m
        for m in manifests
        if m["kind"] != "Deployment"
        and (disaggregated or shape in ("lws-unified", "llmisvc-unified-multi"))
    ]
    assert bool(reported) == bool(ungated)
