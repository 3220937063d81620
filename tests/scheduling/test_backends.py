"""Clusters whose backend cannot run a replica: filtered before placing, and left."""

import pytest

from modelplane.scheduling import Origin, Rejection

from .builders import Obj, cluster, deployment, h100, placements, replica, request, role, run

URI = "hf://org/model"
MIXED = {"tensor": 8, "pipeline": 2, "data": 2, "dataLocal": 1}


def _fleet() -> list[dict[str, object]]:
    # kserve sorts first by name, so without the filter it would take the replica.
    return [cluster("a-kserve", h100(2), backend="KServe"), cluster("b-native", h100(2))]


def test_kserve_without_a_model_uri_is_filtered_with_a_trace_reason() -> None:
    decision = run(deployment(1), _fleet())

    assert placements(decision) == ["b-native/0:h100"]
    (entry,) = decision.match_trace()
    assert entry.cluster == "a-kserve"
    assert entry.reason == Rejection.BACKEND_UNSUPPORTED
    assert "spec.model.uri" in (entry.message or "")


def test_kserve_takes_a_replica_that_names_its_weights() -> None:
    decision = run(deployment(1, model_uri=URI), _fleet())

    assert placements(decision) == ["a-kserve/0:h100"]
    assert decision.match_trace() == []


def test_kserve_takes_a_replica_whose_cache_names_its_weights() -> None:
    # The renderer serves the cache's URI on KServe, so the cacheRef alone is enough.
    decision = run(deployment(1, cache_ref="weights"), _fleet())

    assert placements(decision) == ["a-kserve/0:h100"]
    assert decision.match_trace() == []


def test_kserve_is_filtered_for_pipeline_and_data_parallelism_in_one_worker() -> None:
    fleet = [cluster("a-kserve", h100(8), backend="KServe"), cluster("b-native", h100(8))]
    decision = run(deployment(1, model_uri=URI, topology=MIXED), fleet)

    assert [p.split("/")[0] for p in placements(decision)] == ["b-native"]
    (entry,) = decision.match_trace()
    assert entry.reason == Rejection.BACKEND_UNSUPPORTED
    assert "pipeline and data parallelism" in (entry.message or "")


@pytest.mark.parametrize(
    "shape",
    [
        {"topology": {"tensor": 8, "pipeline": 2}},
        # Under P/D KServe picks the decode variant of the same missing preset.
        {
            "decode": role(request("gpu", 8), topology={"tensor": 8, "pipeline": 2}),
            "prefill": role(),
        },
    ],
    ids=["unified", "decode"],
)
def test_kserve_is_filtered_for_a_multi_node_pipeline_parallel_worker(shape: Obj) -> None:
    # KServe v0.20 ships no pipeline-parallel preset: such a service never becomes Ready.
    fleet = [cluster("a-kserve", h100(8), backend="KServe"), cluster("b-native", h100(8))]
    decision = run(deployment(1, request("gpu", 8), model_uri=URI, **shape), fleet)

    assert {p.split("/")[0] for p in placements(decision)} == {"b-native"}
    (entry,) = decision.match_trace()
    assert entry.cluster == "a-kserve"
    assert entry.reason == Rejection.BACKEND_UNSUPPORTED
    assert "kserve-config-llm-worker-pipeline-parallel" in (entry.message or "")


def test_kserve_takes_a_multi_node_data_parallel_worker() -> None:
    # KServe ships the data-parallel preset, so only pipeline stages are kept off.
    fleet = [cluster("a-kserve", h100(8), backend="KServe"), cluster("b-native", h100(8))]
    topology = {"tensor": 8, "data": 2, "dataLocal": 1}
    decision = run(deployment(1, request("gpu", 8), model_uri=URI, topology=topology), fleet)

    assert [p.split("/")[0] for p in placements(decision)] == ["a-kserve"]
    assert decision.match_trace() == []


def test_a_replica_the_backend_refused_moves_make_before_break() -> None:
    refused = replica("a-kserve", 0)  # placed before the filter existed: never serves
    first = run(deployment(1), _fleet(), [refused])

    # Round 1: its replacement is placed; the refused replica stays until then.
    assert placements(first) == ["a-kserve/0:h100", "b-native/0:h100"]
    pending = [r for r in first.replicas if r.cluster == "a-kserve"]
    assert [r.origin for r in pending] == [Origin.PENDING]
    assert first.removed == ()

    # Round 2: the replacement exists, so the refused replica goes.
    replacement = replica("b-native", 0)
    second = run(deployment(1), _fleet(), [refused, replacement])
    assert placements(second) == ["b-native/0:h100"]
    (gone,) = second.removed
    assert gone.cluster == "a-kserve"
    assert "its cluster cannot run it: its backend is KServe" in gone.reason


def test_a_refused_replica_with_nowhere_to_go_is_held_not_dropped() -> None:
    fleet = [cluster("a-kserve", h100(2), backend="KServe")]
    decision = run(deployment(1), fleet, [replica("a-kserve", 0)])

    assert placements(decision) == ["a-kserve/0:h100"]
    assert decision.removed == ()
    assert decision.condition.status is False


def _renders_with(obj: Obj, backend: str) -> Obj:
    """The replica as placed on a cluster whose backend was `backend` then."""
    annotations = {**obj["metadata"]["annotations"], "modelplane.ai/backend": backend}
    return {**obj, "metadata": {**obj["metadata"], "annotations": annotations}}


def test_a_replica_keeps_its_backend_until_a_replacement_with_the_new_one_serves() -> None:
    """Cluster a switched from Native to KServe under a serving replica: rendering it
    with KServe would change its workload's kind under one Object (orphaning the old
    one), so it is replaced make-before-break, the replacement rendered with KServe."""
    fleet = [cluster("a", h100(2), backend="KServe")]
    old = _renders_with(replica("a", 0, serving=True), "Native")
    first = run(deployment(1, model_uri=URI), fleet, [old])

    assert [(r.cluster, r.origin, r.backend) for r in first.replicas] == [
        ("a", Origin.PENDING, "Native"),
        ("a", Origin.PLACED, "KServe"),
    ]
    assert first.removed == ()

    new = _renders_with(replica("a", 1, serving=True), "KServe")
    second = run(deployment(1, model_uri=URI), fleet, [old, new])
    assert [(r.index, r.origin, r.backend) for r in second.replicas] == [
        (1, Origin.RETAINED, "KServe")
    ]
    (gone,) = second.removed
    assert "its cluster's backend changed from Native to KServe" in gone.reason


def test_a_replica_recording_no_backend_renders_with_its_clusters() -> None:
    """Placed before replicas recorded their backend: nothing says it renders with
    another, so it is kept, and now records its cluster's."""
    fleet = [cluster("a", h100(2), backend="KServe")]
    decision = run(deployment(1, model_uri=URI), fleet, [replica("a", 0, serving=True)])

    assert [(r.origin, r.backend) for r in decision.replicas] == [(Origin.RETAINED, "KServe")]
    assert decision.removed == ()


def _published(obj: Obj, *kinds: str) -> Obj:
    """The replica with the workloads it published (`status.workloads`)."""
    workloads = [{"role": "workers", "kind": kind, "name": "w"} for kind in kinds]
    return {**obj, "status": {**obj.get("status", {}), "workloads": workloads}}


@pytest.mark.parametrize(
    ("backend", "kind", "was"),
    [("KServe", "Deployment", "Native"), ("Native", "LLMInferenceService", "KServe")],
)
def test_a_replica_recording_no_backend_is_read_by_the_workloads_it_published(
    backend: str, kind: str, was: str
) -> None:
    """Placed before replicas recorded their backend, and its cluster switched since: what
    it published says what renders it, so it is replaced make-before-break rather than
    stamped with its cluster's new backend (which would change its workload's kind)."""
    fleet = [cluster("a", h100(2), backend=backend)]
    old = _published(replica("a", 0, serving=True), kind)
    decision = run(deployment(1, model_uri=URI), fleet, [old])

    assert [(r.cluster, r.origin, r.backend) for r in decision.replicas] == [
        ("a", Origin.PENDING, was),
        ("a", Origin.PLACED, backend),
    ]
    assert decision.removed == ()
