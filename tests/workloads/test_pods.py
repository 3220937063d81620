"""Pod shaping: claims, toleration, pool pin, pass-through and refusals."""

import copy
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.core.kinds import pod_sites
from modelplane.core.vocabulary import LABEL_ROLE, Reason
from modelplane.workloads import (
    RemoteObject,
    render_replica,
)

from .inputs import read_cluster, read_replica

BACKENDS = ["Native", "KServe"]
TOPOLOGIES = [{"tensor": 8}, {"tensor": 8, "pipeline": 2}]


def _render(build: Any, obj: dict[str, Any], backend: str = "Native") -> list[RemoteObject]:
    return render_replica(read_replica(obj), read_cluster(build.cluster(backend=backend))).objects()


def _pods(objects: list[RemoteObject]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(pod spec, engine container) for every pod template of every workload."""
    specs = [spec for obj in objects for site in pod_sites(obj.manifest) for _, spec in site.specs]
    assert specs
    for pod in specs:
        engines = [c for c in pod["containers"] if c["name"] in ("engine", "main")]
        assert len(engines) == 1
        yield pod, engines[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_every_pod_claims_its_roles_template(
    build: Any, backend: str, topology: dict[str, int]
) -> None:
    objects = _render(
        build,
        build.replica(decode=build.role(topology=topology), prefill=build.role(pool="l4")),
        backend,
    )
    names = {
        o.manifest["metadata"]["labels"][LABEL_ROLE]: o.manifest["metadata"]["name"]
        for o in objects
        if o.key.startswith("claims-")
    }
    pods = list(_pods(objects))
    assert len(pods) == (3 if topology.get("pipeline") else 2)
    for pod, engine in pods:
        [claim] = pod["resourceClaims"]
        assert claim["name"] == "devices"
        assert claim["resourceClaimTemplateName"] in names.values()
        assert engine["resources"]["claims"] == [{"name": "devices"}]
        # GPUs bind only through DRA.
        assert "nvidia.com/gpu" not in repr(engine["resources"])


def test_claim_template_carries_the_requests(build: Any) -> None:
    requests = [
        {
            "name": "gpu",
            "deviceClassName": "gpu.nvidia.com",
            "count": 8,
            "selectors": [{"cel": "a"}, {"cel": "b"}],
        },
        {"name": "nic", "deviceClassName": "rdma.example.com", "count": 1},
    ]
    objects = {
        o.key: o for o in _render(build, build.replica(workers=build.role(requests=requests)))
    }
    template = objects["claims-workers"].manifest
    assert template["kind"] == "ResourceClaimTemplate"
    assert template["metadata"]["namespace"] == "mp-ml-team-prod"
    assert template["spec"]["spec"]["devices"]["requests"] == [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "allocationMode": "ExactCount",
                "count": 8,
                "selectors": [{"cel": {"expression": "a"}}, {"cel": {"expression": "b"}}],
            },
        },
        {
            "name": "nic",
            "exactly": {
                "deviceClassName": "rdma.example.com",
                "allocationMode": "ExactCount",
                "count": 1,
            },
        },
    ]
    assert objects["claims-workers"].readiness == {"policy": "SuccessfulCreate"}


def test_a_role_without_requests_claims_nothing(build: Any) -> None:
    objects = _render(build, build.replica(workers=build.role(requests=[])))
    assert [o.key for o in objects] == ["namespace", "service", "workload-workers"]
    for pod, engine in _pods(objects):
        assert "resourceClaims" not in pod and "tolerations" not in pod
        assert "claims" not in engine.get("resources", {})


GPU_EXISTS = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
MIG_EQUAL = {"key": "mig", "operator": "Equal", "value": "1g", "effect": "NoExecute"}


@pytest.mark.parametrize(
    ("device_class", "recorded"),
    [
        # The toleration is what the scheduler recorded from the class, whatever the
        # device class is called: a MIG class tolerates, a "gpu"-named one need not.
        ("mig.nvidia.com", [GPU_EXISTS, MIG_EQUAL]),
        ("gpu.nvidia.com", []),
        ("tpu.google.com", [GPU_EXISTS]),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_pods_tolerate_exactly_the_recorded_taints(
    build: Any, device_class: str, recorded: list[dict[str, str]], backend: str
) -> None:
    role = build.role(
        requests=[{"name": "r", "deviceClassName": device_class, "count": 1}],
        topology={"pipeline": 2},
    )
    role["tolerations"] = copy.deepcopy(recorded)
    objects = _render(build, build.replica(workers=role), backend)
    for pod, _ in _pods(objects):
        assert pod.get("tolerations") == (recorded or None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_pod_is_pinned_to_its_pool(build: Any, backend: str) -> None:
    objects = _render(
        build,
        build.replica(
            decode=build.role(pool="h100", topology={"pipeline": 2}),
            prefill=build.role(pool="l4"),
        ),
        backend,
    )
    pools = sorted(pod["nodeSelector"]["modelplane.ai/pool"] for pod, _ in _pods(objects))
    assert pools == ["h100", "h100", "l4"]
    assert all(len(pod["nodeSelector"]) == 1 for pod, _ in _pods(objects))


def test_unknown_pool_is_the_inputs_fault(build: Any) -> None:
    with pytest.raises(InvalidInputError) as caught:
        _render(build, build.replica(decode=build.role(), prefill=build.role(pool="a100")))
    assert caught.value.issues[0].path == "spec.prefill.nodePoolName"
    assert caught.value.issues[0].reason == Reason.POOL_NOT_FOUND


def test_wrong_cluster_is_refused(build: Any) -> None:
    with pytest.raises(InvalidInputError) as caught:
        _render(build, build.replica(cluster="elsewhere"))
    assert (caught.value.issues[0].path, caught.value.issues[0].reason) == (
        "spec.clusterName",
        Reason.CLUSTER_NOT_FOUND,
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_engine_image_command_args_env_pass_through(
    build: Any, backend: str, topology: dict[str, int]
) -> None:
    env = [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        {"name": "NODE_RANK", "value": "$(MODELPLANE_NODE_RANK)"},
    ]
    engine = build.engine(
        command=["python3", "-m", "vllm.entrypoints.openai.api_server"],
        args=["--model=x", "--tensor-parallel-size=8"],
        env=env,
        resources={"requests": {"cpu": "8", "memory": "64Gi"}},
        volumeMounts=[{"name": "shm", "mountPath": "/dev/shm"}],
    )
    sidecar = {"name": "metrics", "image": "exporter:1"}
    template = {
        "spec": {
            "containers": [sidecar, engine],
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
            "serviceAccountName": "kimi",
        }
    }
    original = copy.deepcopy(template)
    objects = _render(
        build, build.replica(workers=build.role(template=template, topology=topology)), backend
    )
    assert template == original
    for pod, rendered in _pods(objects):
        assert rendered["image"] == engine["image"]
        assert rendered["command"] == engine["command"]
        assert rendered["args"] == engine["args"]
        assert rendered["env"][-2:] == env  # untouched, after Modelplane's contract
        assert [e["name"] for e in rendered["env"][:-2]] == [
            "MODELPLANE_NODE_RANK",
            "MODELPLANE_NODE_COUNT",
            "MODELPLANE_LEADER_ADDRESS",
            "MODELPLANE_MODEL_NAME",
            "MODELPLANE_MODEL_URI",
        ]
        assert rendered["env"][3:5] == [
            {"name": "MODELPLANE_MODEL_NAME", "value": "kimi-k2"},
            {"name": "MODELPLANE_MODEL_URI", "value": "hf://moonshotai/Kimi-K2-Instruct"},
        ]
        assert rendered["resources"]["requests"] == {"cpu": "8", "memory": "64Gi"}
        assert rendered["volumeMounts"] == engine["volumeMounts"]
        assert pod["containers"][0] == sidecar
        assert pod["volumes"] == template["spec"]["volumes"]
        assert pod["serviceAccountName"] == "kimi"


def test_the_teams_port_and_probe_are_kept(build: Any) -> None:
    probe = {"httpGet": {"path": "/v1/models", "port": 8000}, "periodSeconds": 30}
    engine = build.engine(ports=[{"containerPort": 8000, "name": "api"}], readinessProbe=probe)
    template = {"spec": {"containers": [engine]}}
    [workload] = [
        o
        for o in _render(build, build.replica(workers=build.role(template=template)))
        if o.key == "workload-workers"
    ]
    rendered = workload.manifest["spec"]["template"]["spec"]["containers"][0]
    assert rendered["ports"] == [{"containerPort": 8000, "name": "api"}]
    assert rendered["readinessProbe"] == probe


def test_modelplane_labels_win_over_the_template(build: Any) -> None:
    template = {
        "metadata": {"labels": {"modelplane.ai/role": "evil", "team": "a"}},
        "spec": {"containers": [build.engine()]},
    }
    objects = _render(build, build.replica(workers=build.role(template=template)))
    labels = next(o for o in objects if o.key == "workload-workers").manifest["spec"]["template"][
        "metadata"
    ]["labels"]
    assert labels["modelplane.ai/role"] == "workers"
    assert labels["team"] == "a"
    assert list(labels) == sorted(labels)


def test_only_modelplane_marks_a_pod_serving(build: Any) -> None:
    template = {
        "metadata": {"labels": {"modelplane.ai/serving": "true"}},
        "spec": {"containers": [build.engine()]},
    }
    objects = _render(
        build, build.replica(workers=build.role(template=template, topology={"pipeline": 2}))
    )
    lwt = next(o for o in objects if o.key == "workload-workers").manifest["spec"][
        "leaderWorkerTemplate"
    ]
    assert lwt["leaderTemplate"]["metadata"]["labels"]["modelplane.ai/serving"] == "true"
    assert "modelplane.ai/serving" not in lwt["workerTemplate"]["metadata"]["labels"]


def _template(**spec: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "engine", "image": "i"}], **spec}}


@pytest.mark.parametrize(
    ("template", "field"),
    [
        (
            {"spec": {"containers": [{"name": "vllm", "image": "i"}]}},
            "spec.workers.template.spec.containers",
        ),
        # Two engines are two containers of one name: refused as a repeat
        # (core/pod_keys), at the second, with the template's other checks.
        (
            {"spec": {"containers": [{"name": "engine"}, {"name": "engine"}]}},
            "spec.workers.template.spec.containers[1].name",
        ),
        ({"metadata": {}}, "spec.workers.template.spec"),
        (_template(nodeSelector={"a": "b"}), "spec.workers.template.spec.nodeSelector"),
        (_template(tolerations=[]), "spec.workers.template.spec.tolerations"),
        (_template(schedulerName="x"), "spec.workers.template.spec.schedulerName"),
        (_template(priorityClassName="x"), "spec.workers.template.spec.priorityClassName"),
        (_template(priority=1000), "spec.workers.template.spec.priority"),
        (_template(preemptionPolicy="Never"), "spec.workers.template.spec.preemptionPolicy"),
        (_template(resourceClaims=[]), "spec.workers.template.spec.resourceClaims"),
        (_template(nodeName="n1"), "spec.workers.template.spec.nodeName"),
        (
            {
                "spec": {
                    "containers": [
                        {"name": "engine", "env": [{"name": "MODELPLANE_NODE_RANK", "value": "1"}]}
                    ]
                }
            },
            "spec.workers.template.spec.containers[0].env[0].name",
        ),
        (
            {
                "spec": {
                    "containers": [
                        {"name": "engine", "ports": [{"name": "http", "containerPort": 9000}]}
                    ]
                }
            },
            "spec.workers.template.spec.containers[0].ports[0].containerPort",
        ),
        (
            {
                "metadata": {"labels": {"bad key!": "v"}},
                "spec": {"containers": [{"name": "engine"}]},
            },
            "spec.workers.template.metadata.labels[bad key!]",
        ),
        (
            {"metadata": {"labels": {"k": "x" * 64}}, "spec": {"containers": [{"name": "engine"}]}},
            "spec.workers.template.metadata.labels[k]",
        ),
        (
            {"metadata": {"annotations": {"k": 1}}, "spec": {"containers": [{"name": "engine"}]}},
            "spec.workers.template.metadata.annotations[k]",
        ),
        # Of two bad keys, the first by name, whatever order the map arrives in.
        (
            {
                "metadata": {"labels": {"z!": "v", "b!": "v"}},
                "spec": {"containers": [{"name": "engine"}]},
            },
            "spec.workers.template.metadata.labels[b!]",
        ),
    ],
)
def test_template_refusals_name_the_field(build: Any, template: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        _render(build, build.replica(workers=build.role(template=template)))
    assert caught.value.issues[0].path == field


def test_pool_must_be_a_label_value(build: Any) -> None:
    obj = build.replica(workers=build.role(pool="bad pool"))
    # The InferenceCluster schema would refuse such a pool; the renderer still checks.
    cluster = replace(read_cluster(build.cluster()), pools=("bad pool",))
    with pytest.raises(InvalidInputError) as caught:
        render_replica(read_replica(obj), cluster)
    assert caught.value.issues[0].path == "spec.workers.nodePoolName"
