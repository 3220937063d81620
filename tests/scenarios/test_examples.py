"""Every example fleet renders to a fixed point, and everything in it is valid.

Each example set goes through the real APIs and functions; every object of the
final world is checked: composites against their XRDs (and the generated
models), composed objects against the upstream CRDs or, strictly, the Kubernetes
schemas, provider-kubernetes Objects through the manifests they carry.
"""

from pathlib import Path
from typing import Any

import modelplane_models
import pytest
from pydantic import BaseModel

from modelplane_cli.render import intervals
from modelplane_cli.render.summary import summarize
from modelplane_cli.render.timeline import duration
from modelplane_cli.schema import ManifestValidator, SchemaRegistry
from modelplane_cli.schema.upstream import STANDIN_DIRECTORY
from modelplane_dev.bench_faults import EXAMPLE_SETS

from . import pod_security
from .fleets import Fleet, Renderer

# The example sets `make run` renders, listed once (the faults bench renders them too).
SETS = EXAMPLE_SETS
# provider-kubernetes' and provider-helm's ClusterProviderConfig and Crossplane's
# Usage are not among ../shared/crds: schemas of the project's own stand in for them
# where `make crds` has not fetched the upstream ones (an upstream CRD wins).
PROVIDER_KINDS = Path(__file__).with_name("provider_kinds.yaml")


def with_provider_kinds(validator: ManifestValidator) -> ManifestValidator:
    """`validator`, falling back to `PROVIDER_KINDS` and the render's stand-ins for
    the kinds it lacks."""
    standins = sorted(STANDIN_DIRECTORY.glob("*.yaml"))
    registry = SchemaRegistry.from_files([PROVIDER_KINDS, *standins])
    registry.merge(validator.registry)
    return ManifestValidator(registry, validator.kubernetes_version)


@pytest.fixture(scope="module")
def validator(manifest_validator: ManifestValidator) -> ManifestValidator:
    return with_provider_kinds(manifest_validator)


@pytest.fixture(scope="module", params=sorted(SETS))
def example(request: pytest.FixtureRequest, renderer: Renderer) -> Fleet:
    return renderer.paths(*SETS[str(request.param)])


def test_converges_without_errors(example: Fleet) -> None:
    assert example.result.ok, example.result.errors
    assert example.result.converged


def test_each_example_says_how_long_it_takes_on_a_control_plane(example: Fleet) -> None:
    result = example.result
    # A workload's serving is what provider-kubernetes reports on its next poll, so
    # an example with a serving replica takes a poll at least; one whose replicas
    # all wait for a created cluster's nodes takes its composites' requeues.
    # Watches never make anything slower.
    replicas = example.all("ModelReplica")
    if any(not _waits_for_capacity(r) for r in replicas):
        assert result.defaults.seconds >= intervals.KUBERNETES_POLL
    else:
        assert result.defaults.seconds > 0
    assert result.watched.seconds <= result.defaults.seconds
    first = summarize(result, sorted(modelplane_models.__all__)).splitlines()[0]
    assert first.endswith(
        f"(converged; {duration(result.defaults.seconds)} on a control plane with default "
        f"intervals, {duration(result.watched.seconds)} with watches on)."
    )


def written_by_modelplane(obj: dict[str, Any], composites: set[str]) -> dict[str, Any]:
    """What Modelplane wrote of `obj`: a composite's status minus the conditions
    Crossplane stamps; nothing of another object's status, which stands in for
    its controller's."""
    if obj["kind"] not in composites:
        return {key: value for key, value in obj.items() if key != "status"}
    status = {key: value for key, value in obj.get("status", {}).items() if key != "conditions"}
    return {**obj, "status": status}


def assert_valid(fleet: Fleet, validator: ManifestValidator) -> None:
    """Every object Modelplane wrote validates against its CRD or XRD."""
    validator = with_provider_kinds(validator)
    composites = set(modelplane_models.__all__)
    for obj in fleet.objects:
        problems = validator.validate(written_by_modelplane(obj, composites))
        assert problems == [], f"{obj['kind']} {obj['metadata']['name']}: {problems}"


def test_every_object_is_valid(example: Fleet, validator: ManifestValidator) -> None:
    composites = set(modelplane_models.__all__)
    checked = 0
    for obj in example.objects:
        problems = validator.validate(written_by_modelplane(obj, composites))
        assert problems == [], f"{obj['kind']} {obj['metadata']['name']}: {problems}"
        checked += 1
    assert checked > 25


def test_composites_fit_the_generated_models(example: Fleet) -> None:
    models: dict[str, type[BaseModel]] = {
        name: getattr(modelplane_models, name) for name in modelplane_models.__all__
    }
    composites = [o for o in example.objects if o["kind"] in models]
    for obj in composites:
        models[obj["kind"]].model_validate(obj)


def test_the_serving_and_caching_fleets_render_every_kind(renderer: Renderer) -> None:
    rendered = {o["kind"] for o in renderer.paths(*SETS["serving"]).objects}
    rendered |= {o["kind"] for o in renderer.paths(*SETS["caching"]).objects}
    assert set(modelplane_models.__all__) <= rendered


def _waits_for_capacity(replica: dict[str, Any]) -> bool:
    serving = [c for c in replica["status"]["conditions"] if c["type"] == "Serving"]
    return [c["reason"] for c in serving] == ["WaitingForCapacity"]


def test_every_replica_serves(example: Fleet) -> None:
    """Every replica serves, but one placed on a created cluster's pool that has no
    node yet (render does not simulate the cloud's autoscaler), which says so."""
    waiting = {
        replica["metadata"]["labels"]["modelplane.ai/deployment"]
        for replica in example.all("ModelReplica")
        if _waits_for_capacity(replica)
    }
    for deployment in example.all("ModelDeployment"):
        status: dict[str, Any] = deployment["status"]
        wanted = deployment["spec"]["replicas"]
        if deployment["metadata"]["name"] in waiting:
            assert status["replicas"]["total"] == wanted, deployment["metadata"]
            continue
        assert status["replicas"] == {"total": wanted, "ready": wanted}, deployment["metadata"]


def test_rendering_the_output_again_changes_nothing(example: Fleet) -> None:
    again = example.edit(lambda objects: None)
    assert again.result.ok, again.result.errors
    assert again.result.rounds == 1
    assert again.objects == example.objects


def test_grpc_and_in_process_agree(renderer: Renderer) -> None:
    over_grpc = renderer.paths(*SETS["fleet"], in_process=False)
    in_process = renderer.paths(*SETS["fleet"])
    assert over_grpc.objects == in_process.objects
    assert over_grpc.result.events == in_process.result.events


WORKLOADS = {
    "fleet": {"Deployment", "LeaderWorkerSet", "LLMInferenceService", "Service"},
    "serving": {
        "Deployment",
        "LLMInferenceService",
        "Service",
        "InferencePool",
        "HTTPRoute",
        "Gateway",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    },
    "coscheduling": {"Deployment", "LeaderWorkerSet", "LLMInferenceService", "PodGroup"},
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_each_backend_and_shape_is_rendered(renderer: Renderer, name: str) -> None:
    rendered = renderer.paths(*SETS[name])
    kinds = {o["spec"]["forProvider"]["manifest"]["kind"] for o in rendered.all("Object")}
    assert WORKLOADS[name] <= kinds


def test_objects_a_decision_waits_on_are_watched(example: Fleet) -> None:
    """Workloads, gateways, routes, prerequisite observers and model-cache downloads
    set `spec.watch`; the Object CRD of provider-kubernetes v1.2 has the field."""
    watched: set[str] = set()
    for obj in example.all("Object"):
        spec = obj["spec"]
        manifest_kind = spec["forProvider"]["manifest"]["kind"]
        policy = spec.get("readiness", {}).get("policy", "SuccessfulCreate")
        observes = spec.get("managementPolicies") == ["Observe"]
        download = manifest_kind in {"Job", "LocalModelNamespaceCache"}
        assert spec.get("watch", False) is (policy != "SuccessfulCreate" or observes or download), (
            obj
        )
        if spec.get("watch"):
            watched.add(manifest_kind)
    # Prerequisite observers and workloads, in every example; every workload kind
    # the example renders is watched.
    workloads = {"Deployment", "LeaderWorkerSet", "LLMInferenceService"}
    rendered = {o["spec"]["forProvider"]["manifest"]["kind"] for o in example.all("Object")}
    assert "CustomResourceDefinition" in watched
    assert workloads & rendered
    assert workloads & rendered <= watched


def test_gateways_and_routes_are_watched(renderer: Renderer) -> None:
    serving = renderer.paths(*SETS["serving"])
    watched = {
        o["spec"]["forProvider"]["manifest"]["kind"]
        for o in serving.all("Object")
        if o["spec"].get("watch")
    }
    assert {"Gateway", "HTTPRoute"} <= watched


def test_what_modelplane_puts_in_tenant_namespaces_passes_baseline(example: Fleet) -> None:
    """Tenant namespaces enforce Pod Security `baseline` (warn and audit at it on a
    KServe cluster, whose own multi-node presets add capabilities baseline refuses)
    unless the platform's tenancy says otherwise, and none of the examples' does:
    every pod Modelplane composes there (engines, endpoint pickers, download Jobs)
    and every team template it carries must pass it, or its pods would be refused on
    the workload cluster (or warned about)."""
    namespaces = example.manifests("Namespace")
    tenants = {
        n["metadata"]["name"]: n["metadata"]["labels"]
        for n in namespaces
        if "modelplane.ai/namespace" in n["metadata"].get("labels", {})
    }
    assert tenants
    for name, labels in tenants.items():
        levels = {k.rpartition("/")[2]: v for k, v in labels.items() if "pod-security" in k}
        assert levels.get("enforce") == "baseline" or levels.get("audit") == "baseline", name
    checked = 0
    for obj in example.all("Object"):
        manifest = obj["spec"]["forProvider"]["manifest"]
        if manifest["metadata"].get("namespace") not in tenants:
            continue
        for spec in pod_security.pod_specs(manifest.get("spec", {})):
            assert pod_security.violations(spec) == [], (manifest["kind"], obj["metadata"]["name"])
            checked += 1
        for found in pod_security.annotations(manifest.get("spec", {})):
            assert pod_security.annotation_violations(found) == [], obj["metadata"]["name"]
    assert checked > 0


def test_the_baseline_check_refuses_host_access() -> None:
    """The check above can fail: the reviewer's hostile template, field by field."""
    hostile = {
        "hostNetwork": True,
        "hostPID": True,
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
        "containers": [
            {
                "name": "engine",
                "securityContext": {"privileged": True, "capabilities": {"add": ["NET_RAW"]}},
                "ports": [{"containerPort": 8000, "hostPort": 8000}],
            }
        ],
    }
    assert pod_security.violations(hostile) == [
        "spec.hostNetwork",
        "spec.hostPID",
        "spec.volumes[0].hostPath",
        "spec.containers[0].securityContext.privileged",
        "spec.containers[0].securityContext.capabilities.add[0]",
        "spec.containers[0].ports[0].hostPort",
    ]
    # Root without privilege, as the download Job runs, passes.
    root = {"containers": [{"name": "download", "securityContext": {"runAsUser": 0}}]}
    assert pod_security.violations(root) == []
