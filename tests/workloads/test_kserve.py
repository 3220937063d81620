"""The KServe backend: one LLMInferenceService per replica."""

from dataclasses import replace
from typing import Any

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.core.kinds.llm_inference_service import lws_size as kserve_lws_size
from modelplane.core.vocabulary import LABEL_ROLE, LABEL_SERVING
from modelplane.workloads import (
    KSERVE_ENGINE_CONTAINER,
    CacheMount,
    RemoteObject,
    render_replica,
)

from .inputs import read_cluster, read_replica


def _render(build: Any, obj: dict[str, Any]) -> dict[str, RemoteObject]:
    cluster = read_cluster(build.cluster(backend="KServe"))
    return {o.key: o for o in render_replica(read_replica(obj), cluster).objects()}


def test_single_node_unified(build: Any) -> None:
    objects = _render(build, build.replica(workers=build.role(count=3, topology={"tensor": 8})))
    assert sorted(objects) == ["claims-workers", "namespace", "workload-workers"]
    service = objects["workload-workers"].manifest
    assert (service["apiVersion"], service["kind"]) == (
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
    )
    spec = service["spec"]
    assert spec["replicas"] == 3
    assert spec["parallelism"] == {"tensor": 8}
    assert "worker" not in spec and "prefill" not in spec
    # KServe downloads the weights and serves them under the deployment's name; with
    # no Gateway on the cluster there is nothing to route through.
    assert spec["model"] == {"uri": "hf://moonshotai/Kimi-K2-Instruct", "name": "kimi-k2"}
    assert "router" not in spec
    engine = spec["template"]["containers"][0]
    assert engine["name"] == KSERVE_ENGINE_CONTAINER
    assert engine["image"] == "vllm/vllm-openai:v0.7.3"
    # KServe's presets own the port and probes.
    assert "ports" not in engine and "readinessProbe" not in engine
    assert spec["labels"][LABEL_ROLE] == "workers"
    assert LABEL_SERVING not in spec["labels"]
    assert spec["labels"]["app"] == "kimi"


@pytest.mark.parametrize(
    ("topology", "parallelism"),
    [
        ({"tensor": 8, "pipeline": 2}, {"tensor": 8, "pipeline": 2}),
        ({"tensor": 4, "data": 8, "dataLocal": 2}, {"tensor": 4, "data": 8, "dataLocal": 2}),
        ({"tensor": 2, "data": 2}, {"tensor": 2, "data": 2, "dataLocal": 1}),
    ],
)
def test_multi_node_unified_sets_worker(
    build: Any, topology: dict[str, int], parallelism: dict[str, int]
) -> None:
    spec = _render(build, build.replica(workers=build.role(topology=topology)))[
        "workload-workers"
    ].manifest["spec"]
    assert spec["parallelism"] == parallelism
    for pod in (spec["template"], spec["worker"]):
        assert pod["containers"][0]["resources"]["claims"] == [{"name": "devices"}]
        assert pod["nodeSelector"] == {"modelplane.ai/pool": "h100"}
        assert pod["resourceClaims"][0]["resourceClaimTemplateName"].endswith("-devices")


def test_data_parallel_on_one_node_stays_single_node(build: Any) -> None:
    spec = _render(build, build.replica(workers=build.role(topology={"data": 4, "dataLocal": 4})))[
        "workload-workers"
    ].manifest["spec"]
    assert spec["parallelism"] == {"tensor": 1, "data": 4, "dataLocal": 4}
    assert "worker" not in spec


def test_kserve_lws_size_matches_nodes_per_worker(build: Any) -> None:
    """The LWS size KServe (and the conventions) derive from parallelism is what the fleet charged."""
    for topology in ({"pipeline": 4}, {"data": 6, "dataLocal": 2}, {"data": 8, "dataLocal": 8}):
        replica = read_replica(build.replica(workers=build.role(topology=topology)))
        spec = (
            render_replica(replica, read_cluster(build.cluster(backend="KServe")))
            .objects()[-1]
            .manifest["spec"]
        )
        assert (
            kserve_lws_size(spec["parallelism"])
            == replica.roles[0].placed.topology.nodes_per_worker
        )


def test_disaggregated_is_one_service_with_prefill(build: Any) -> None:
    objects = _render(
        build,
        build.replica(
            decode=build.role(count=3, topology={"tensor": 8, "pipeline": 2}),
            prefill=build.role(count=5, topology={"tensor": 4}, pool="l4"),
        ),
    )
    assert sorted(objects) == ["claims-decode", "claims-prefill", "namespace", "workload-decode"]
    service = objects["workload-decode"].manifest
    assert service["metadata"]["labels"][LABEL_ROLE] == "decode"
    spec = service["spec"]
    assert (spec["replicas"], spec["parallelism"]) == (3, {"tensor": 8, "pipeline": 2})
    assert "worker" in spec
    prefill = spec["prefill"]
    assert (prefill["replicas"], prefill["parallelism"]) == (5, {"tensor": 4})
    assert "worker" not in prefill
    assert prefill["labels"][LABEL_ROLE] == "prefill"
    assert spec["labels"][LABEL_ROLE] == "decode"
    assert prefill["template"]["nodeSelector"] == {"modelplane.ai/pool": "l4"}
    claim = objects["claims-prefill"].manifest["metadata"]["name"]
    assert prefill["template"]["resourceClaims"][0]["resourceClaimTemplateName"] == claim


def test_annotations_go_to_spec_annotations(build: Any) -> None:
    template = {
        "metadata": {"annotations": {"prometheus.io/scrape": "true"}},
        "spec": {"containers": [build.engine()]},
    }
    spec = _render(build, build.replica(workers=build.role(template=template)))[
        "workload-workers"
    ].manifest["spec"]
    assert spec["annotations"] == {"prometheus.io/scrape": "true"}


def test_pipeline_with_data_parallel_is_refused(build: Any) -> None:
    obj = build.replica(
        decode=build.role(),
        prefill=build.role(topology={"pipeline": 2, "data": 2}),
    )
    with pytest.raises(InvalidInputError) as caught:
        _render(build, obj)
    assert caught.value.issues[0].path == "spec.prefill.topology"


def test_a_container_named_main_is_refused(build: Any) -> None:
    template = {"spec": {"containers": [build.engine(), {"name": "main", "image": "sidecar"}]}}
    with pytest.raises(InvalidInputError) as caught:
        _render(build, build.replica(workers=build.role(template=template)))
    assert caught.value.issues[0].path == "spec.workers.template.spec.containers[1].name"


def test_service_name_leaves_room_for_kserve_suffixes(build: Any) -> None:
    obj = build.replica(name="a-fairly-long-deployment-name-5ab63")
    service = _render(build, obj)["workload-workers"].manifest
    name = service["metadata"]["name"]
    assert len(name) <= 21
    # KServe's longest derived LWS name must fit the 39 characters Kueue allows.
    assert len(f"{name}-kserve-mn-prefill") <= 39
    assert service["metadata"]["labels"]["modelplane.ai/replica"] == obj["metadata"]["name"]


@pytest.mark.parametrize("nodes", [1, 2], ids=["single-node", "multi-node"])
def test_a_cached_model_s_path_is_where_kserve_mounts_it(build: Any, nodes: int) -> None:
    # The engine args a team writes for a Native cluster (--model=$(MODELPLANE_MODEL_PATH))
    # read the weights on KServe too: KServe mounts the cache's copy at /mnt/models.
    topology = {"tensor": 8, "pipeline": nodes} if nodes > 1 else {"tensor": 8}
    replica = read_replica(build.replica(workers=build.role(topology=topology)))
    assert replica.model is not None
    cache = CacheMount("weights", "hf://org/model", "claim")
    replica = replace(replica, model=replace(replica.model, cache=cache))
    cluster = read_cluster(build.cluster(backend="KServe"))
    objects = {o.key: o for o in render_replica(replica, cluster).objects()}
    spec = objects["workload-workers"].manifest["spec"]
    assert spec["model"]["uri"] == "hf://org/model"
    pods = [spec["template"], *([spec["worker"]] if nodes > 1 else [])]
    for pod in pods:
        (engine,) = pod["containers"]
        env = {e["name"]: e.get("value") for e in engine["env"]}
        assert env["MODELPLANE_MODEL_PATH"] == "/mnt/models"
        # Nothing of Modelplane's is mounted: KServe mounts the cache itself.
        assert "volumes" not in pod


def test_without_a_cache_kserve_gets_no_model_path(build: Any) -> None:
    objects = _render(build, build.replica())
    (engine,) = objects["workload-workers"].manifest["spec"]["template"]["containers"]
    assert "MODELPLANE_MODEL_PATH" not in {e["name"] for e in engine["env"]}


def _recording(obj: dict[str, Any], backend: str) -> dict[str, Any]:
    return {
        **obj,
        "metadata": {**obj["metadata"], "annotations": {"modelplane.ai/backend": backend}},
    }


@pytest.mark.parametrize(
    ("recorded", "cluster_backend", "kind"),
    [
        ("Native", "KServe", "Deployment"),
        ("KServe", "Native", "LLMInferenceService"),
        (None, "KServe", "LLMInferenceService"),
    ],
)
def test_a_replica_renders_with_the_backend_it_records(
    build: Any, recorded: str | None, cluster_backend: str, kind: str
) -> None:
    """Its cluster's backend changed since it was placed: it keeps its workload's kind
    until the fleet scheduler replaces it; recording none, it takes its cluster's."""
    obj = build.replica(workers=build.role(count=1, topology={"tensor": 8}))
    if recorded is not None:
        obj = _recording(obj, recorded)
    cluster = read_cluster(build.cluster(backend=cluster_backend))
    objects = {o.key: o for o in render_replica(read_replica(obj), cluster).objects()}
    assert objects["workload-workers"].manifest["kind"] == kind


def test_a_backend_no_cluster_can_have_is_refused_at_its_annotation(build: Any) -> None:
    obj = _recording(build.replica(), "Triton")
    with pytest.raises(InvalidInputError) as raised:
        read_replica(obj)
    (issue,) = raised.value.issues
    assert issue.path == "metadata.annotations[modelplane.ai/backend]"
    assert "'Triton'" in issue.message
