"""The Native backend: Deployments for single-node workers, LeaderWorkerSets for gangs."""

from typing import Any

import pytest

from modelplane.core.kinds import pod_sites
from modelplane.core.vocabulary import (
    LABEL_DEPLOYMENT,
    LABEL_MANAGED_BY,
    LABEL_REPLICA,
    LABEL_ROLE,
    LABEL_SERVING,
)
from modelplane.workloads import (
    ENGINE_PORT,
    RemoteObject,
    render_replica,
)

from .inputs import read_cluster, read_replica


def _render(build: Any, obj: dict[str, Any]) -> dict[str, RemoteObject]:
    return {
        o.key: o for o in render_replica(read_replica(obj), read_cluster(build.cluster())).objects()
    }


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_single_node_worker_is_a_deployment(build: Any) -> None:
    objects = _render(build, build.replica(workers=build.role(count=3, topology={"tensor": 8})))
    assert sorted(objects) == ["claims-workers", "namespace", "service", "workload-workers"]
    workload = objects["workload-workers"]
    deployment = workload.manifest
    assert (deployment["apiVersion"], deployment["kind"]) == ("apps/v1", "Deployment")
    assert deployment["metadata"]["name"] == "kimi-k2-5ab63-workers"
    assert deployment["metadata"]["namespace"] == "mp-ml-team-prod"
    spec = deployment["spec"]
    assert spec["replicas"] == 3
    assert spec["selector"]["matchLabels"] == {
        LABEL_REPLICA: "kimi-k2-5ab63",
        LABEL_ROLE: "workers",
    }
    assert spec["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}
    pod_labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= pod_labels.items()
    assert pod_labels[LABEL_SERVING] == "true"
    engine = spec["template"]["spec"]["containers"][0]
    assert engine["ports"] == [{"name": "http", "containerPort": ENGINE_PORT, "protocol": "TCP"}]
    assert engine["readinessProbe"]["httpGet"] == {"path": "/health", "port": ENGINE_PORT}
    assert "livenessProbe" not in engine
    env = _env(engine)
    assert env["MODELPLANE_NODE_RANK"] == "0"
    assert env["MODELPLANE_NODE_COUNT"] == "1"
    assert env["MODELPLANE_LEADER_ADDRESS"] == {"fieldRef": {"fieldPath": "status.podIP"}}


@pytest.mark.parametrize(
    ("topology", "size"),
    [
        ({"tensor": 8, "pipeline": 2}, 2),
        ({"tensor": 4, "data": 8, "dataLocal": 2}, 4),
        ({"tensor": 8, "pipeline": 3, "data": 4, "dataLocal": 2}, 6),
    ],
)
def test_multi_node_worker_is_a_leader_worker_set(
    build: Any, topology: dict[str, int], size: int
) -> None:
    objects = _render(build, build.replica(workers=build.role(count=2, topology=topology)))
    lws = objects["workload-workers"].manifest
    assert (lws["apiVersion"], lws["kind"]) == ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
    assert lws["spec"]["replicas"] == 2
    template = lws["spec"]["leaderWorkerTemplate"]
    assert template["size"] == size
    assert template["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"
    leader, worker = template["leaderTemplate"], template["workerTemplate"]
    for pod in (leader, worker):
        engine = pod["spec"]["containers"][0]
        env = _env(engine)
        assert env["MODELPLANE_NODE_RANK"] == "$(LWS_WORKER_INDEX)"
        assert env["MODELPLANE_NODE_COUNT"] == str(size)
        assert env["MODELPLANE_LEADER_ADDRESS"] == "$(LWS_LEADER_ADDRESS)"
        # LWS injects its own variables; Modelplane adds only what LWS lacks.
        assert not {"LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"} & env.keys()
        assert engine["resources"]["claims"] == [{"name": "devices"}]
        assert pod["spec"]["nodeSelector"] == {"modelplane.ai/pool": "h100"}
    # Only the leader answers requests.
    assert leader["metadata"]["labels"][LABEL_SERVING] == "true"
    assert LABEL_SERVING not in worker["metadata"]["labels"]
    assert "ports" in leader["spec"]["containers"][0]
    assert "readinessProbe" in leader["spec"]["containers"][0]
    assert "ports" not in worker["spec"]["containers"][0]
    assert "readinessProbe" not in worker["spec"]["containers"][0]


def test_disaggregated_renders_decode_and_prefill_separately(build: Any) -> None:
    objects = _render(
        build,
        build.replica(
            decode=build.role(count=3, topology={"tensor": 8, "pipeline": 2}),
            prefill=build.role(count=5, topology={"tensor": 4}, pool="l4"),
        ),
    )
    assert sorted(objects) == [
        "claims-decode",
        "claims-prefill",
        "namespace",
        "service",
        "service-prefill",
        "workload-decode",
        "workload-prefill",
    ]
    decode, prefill = objects["workload-decode"].manifest, objects["workload-prefill"].manifest
    assert (decode["kind"], decode["spec"]["replicas"]) == ("LeaderWorkerSet", 3)
    assert (prefill["kind"], prefill["spec"]["replicas"]) == ("Deployment", 5)
    assert decode["metadata"]["labels"][LABEL_ROLE] == "decode"
    assert prefill["metadata"]["labels"][LABEL_ROLE] == "prefill"
    # Same cluster, same tenant namespace; each role on its own pool and claim.
    assert decode["metadata"]["namespace"] == prefill["metadata"]["namespace"]
    assert prefill["spec"]["template"]["spec"]["nodeSelector"] == {"modelplane.ai/pool": "l4"}
    claim_names = {
        role: objects[f"claims-{role}"].manifest["metadata"]["name"]
        for role in ("decode", "prefill")
    }
    assert prefill["spec"]["template"]["spec"]["resourceClaims"] == [
        {"name": "devices", "resourceClaimTemplateName": claim_names["prefill"]}
    ]
    leader = decode["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert leader["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == claim_names["decode"]
    assert claim_names["decode"] != claim_names["prefill"]
    # Requests enter at decode; its engines reach prefill through prefill's Service.
    prefill_service = objects["service-prefill"].manifest
    assert prefill_service["spec"]["selector"] == {
        LABEL_REPLICA: "kimi-k2-5ab63",
        LABEL_ROLE: "prefill",
        "modelplane.ai/serving": "true",
    }
    address = "kimi-k2-5ab63-prefill-http.mp-ml-team-prod.svc.cluster.local"
    assert prefill_service["metadata"]["name"] == address.split(".", maxsplit=1)[0]
    for template in ("leaderTemplate", "workerTemplate"):
        pod = decode["spec"]["leaderWorkerTemplate"][template]["spec"]
        assert _env(pod["containers"][0])["MODELPLANE_PREFILL_ADDRESS"] == address
    assert "MODELPLANE_PREFILL_ADDRESS" not in _env(
        prefill["spec"]["template"]["spec"]["containers"][0]
    )
    assert objects["service"].manifest["spec"]["selector"][LABEL_ROLE] == "decode"


@pytest.mark.parametrize("role_name", ["workers", "decode", "prefill"])
def test_workloads_and_pods_carry_identity_labels(build: Any, role_name: str) -> None:
    if role_name == "workers":
        obj = build.replica(workers=build.role(topology={"tensor": 2, "pipeline": 2}))
    else:
        obj = build.replica(decode=build.role(), prefill=build.role())
    manifest = _render(build, obj)[f"workload-{role_name}"].manifest
    expected = {
        LABEL_DEPLOYMENT: "kimi-k2",
        LABEL_REPLICA: "kimi-k2-5ab63",
        LABEL_ROLE: role_name,
        LABEL_MANAGED_BY: "modelplane",
    }
    assert manifest["metadata"]["labels"] == expected
    sites = pod_sites(manifest)
    assert len(sites) == (1 if manifest["kind"] == "Deployment" else 2)
    for site in sites:
        assert expected.items() <= site.metadata["labels"].items()
        assert site.metadata["labels"]["app"] == "kimi"


def test_no_scheduler_fields_are_set(build: Any) -> None:
    """Scheduler name, priority, queues and gangs belong to the conventions pass."""
    objects = _render(build, build.replica(workers=build.role(topology={"pipeline": 2})))
    text = repr([o.manifest for o in objects.values()])
    for word in ("schedulerName", "priorityClassName", "queue", "PodGroup", "pod-group"):
        assert word not in text


def test_pods_of_one_worker_may_share_a_node(build: Any) -> None:
    """The ledger charges each pod of a worker on its own, so the rendered group asks for
    nothing that would keep two of its pods apart (design: pods of one worker)."""
    topology = {"tensor": 4, "pipeline": 2}
    lws = _render(build, build.replica(workers=build.role(count=1, topology=topology)))[
        "workload-workers"
    ].manifest
    template = lws["spec"]["leaderWorkerTemplate"]
    assert "leaderworkerset.sigs.k8s.io/exclusive-topology" not in lws["metadata"].get(
        "annotations", {}
    )
    for pod in (template["leaderTemplate"], template["workerTemplate"]):
        assert "affinity" not in pod["spec"]
