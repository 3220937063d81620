"""compose-inference-cluster on clusters Modelplane creates: what it composes from each
pool's class, what the cloud reports back, and bad input that deletes nothing."""

from copy import deepcopy
from typing import Any

import pytest
from compose_inference_cluster.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

Obj = dict[str, Any]
NAME = "gpu-east"
GPU: Obj = {"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com"}
EKS_PROVISIONING: Obj = {
    "provider": "EKS",
    "eks": {"instanceType": "p5.48xlarge", "accelerator": {"type": "nvidia-h100", "count": 8}},
}
GKE_PROVISIONING: Obj = {
    "provider": "GKE",
    "gke": {
        "machineType": "a3-highgpu-8g",
        "accelerator": {"type": "nvidia-h100-80gb", "count": 8},
    },
}


def inference_class(provisioning: Obj | None) -> Obj:
    spec: Obj = {"devices": [{**GPU, "count": 8}]}
    if provisioning is not None:
        spec["provisioning"] = provisioning
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "metadata": {"name": "h100"},
        "spec": spec,
    }


# `spec.cluster`'s block for each source Modelplane creates clusters with.
SOURCE_BLOCKS: dict[str, Obj] = {
    "EKS": {"eks": {"region": "us-east-1", "providerConfigRef": {"name": "aws"}}},
    "GKE": {
        "gke": {
            "project": "my-project",
            "location": "us-central1-a",
            "providerConfigRef": {"name": "gcp"},
        }
    },
}


def cluster(source: str, pool: Obj) -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": NAME},
        "spec": {
            "cluster": {"source": source, **SOURCE_BLOCKS[source]},
            "nodePools": [{"name": "h100", "className": "h100", **pool}],
        },
    }


# The GCP provider config a GKE cluster is created with: its credentials are also
# what both ClusterProviderConfigs authenticate with (test_provider_identity).
GCP_PROVIDER_CONFIG: Obj = {
    "apiVersion": "gcp.m.upbound.io/v1beta1",
    "kind": "ClusterProviderConfig",
    "metadata": {"name": "gcp"},
    "spec": {
        "projectID": "my-project",
        "credentials": {
            "source": "Secret",
            "secretRef": {"name": "gcp", "namespace": "crossplane-system", "key": "key.json"},
        },
    },
}


def respond(composite: Obj, klass: Obj, observed: dict[str, Obj] | None = None) -> Obj:
    required = {
        "inferenceclass-h100": [klass],
        "modelreplicas": [],
        "replica-objects": [],
        "gcp-provider-config": [GCP_PROVIDER_CONFIG],
    }
    return as_dict(run(FunctionRunner(), request(composite, observed=observed, required=required)))


def condition(rsp: Obj, type_: str) -> Obj:
    (found,) = [c for c in rsp.get("conditions", []) if c["type"] == type_]
    return found


def resources(rsp: Obj) -> dict[str, Obj]:
    return {k: v["resource"] for k, v in rsp["desired"].get("resources", {}).items()}


def with_status(obj: Obj, at_provider: Obj) -> Obj:
    out = deepcopy(obj)
    out["status"] = {
        "atProvider": at_provider,
        "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
    }
    return out


SYSTEM_POOL_KEYS = {"EKS": "eks-nodegroup-system", "GKE": "gke-nodepool-system"}


def system_ready(source: str) -> dict[str, Obj]:
    """The created cluster's system node group (or pool) as observed once Ready: the
    stack's releases are installed from then on. Empty for an existing cluster."""
    if source not in SYSTEM_POOL_KEYS:
        return {}
    kind = "NodeGroup" if source == "EKS" else "NodePool"
    return {
        SYSTEM_POOL_KEYS[source]: {
            "apiVersion": "",
            "kind": kind,
            "metadata": {"name": f"{NAME}-system", "namespace": "modelplane-system"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]},
        }
    }


@pytest.mark.parametrize(
    ("source", "provisioning", "kind", "key"),
    [
        ("EKS", EKS_PROVISIONING, "NodeGroup", "eks-nodegroup-h100"),
        ("GKE", GKE_PROVISIONING, "NodePool", "gke-nodepool-h100"),
    ],
)
def test_each_pool_is_built_from_its_class(
    source: str, provisioning: Obj, kind: str, key: str
) -> None:
    rsp = respond(
        cluster(source, {"nodeCount": 1, "minNodes": 1, "maxNodes": 3}),
        inference_class(provisioning),
    )
    pool = resources(rsp)[key]
    assert pool["kind"] == kind
    assert pool["metadata"]["namespace"] == "modelplane-system"
    # The cloud-side name is `<cluster>-<pool>`; the resource's own name adds a digest.
    assert pool["metadata"]["annotations"] == {"crossplane.io/external-name": f"{NAME}-h100"}
    assert pool["metadata"]["name"].startswith(f"{NAME}-h100-")
    assert condition(rsp, "Provisioned")["reason"] == "Provisioning"
    status = rsp["desired"]["composite"]["resource"]["status"]
    # Placeable up to maxNodes; nothing ready until the cloud reports.
    assert status["gpuPools"][0]["nodes"] == 3
    assert status["capacity"]["pools"][0]["nodes"] == 0
    provider_config = resources(rsp)["provider-config"]
    assert provider_config["spec"]["credentials"]["secretRef"] == {
        "name": f"{NAME}-kubeconfig",
        "namespace": "modelplane-system",
        "key": "kubeconfig",
    }


def test_a_gke_pool_asks_gke_for_its_accelerators_and_driver() -> None:
    rsp = respond(
        cluster("GKE", {"nodeCount": 2, "minNodes": 1, "maxNodes": 4}),
        inference_class(
            {**GKE_PROVISIONING, "gke": {**GKE_PROVISIONING["gke"], "capacityType": "Spot"}}
        ),
    )
    spec = resources(rsp)["gke-nodepool-h100"]["spec"]
    node_config = spec["forProvider"]["nodeConfig"]
    assert node_config["guestAccelerator"] == [
        {
            "type": "nvidia-h100-80gb",
            "count": 8,
            # Its GPUs are claimed through DRA, which GKE's own driver installation
            # does not support (test_gke_dra).
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"},
        }
    ]
    assert node_config["spot"] is True
    assert node_config["labels"]["modelplane.ai/pool"] == "h100"
    assert spec["forProvider"]["autoscaling"] == {
        "totalMinNodeCount": 1,
        "totalMaxNodeCount": 4,
        "locationPolicy": "ANY",
    }
    # A zonal cluster: the whole initial size in its one zone, set once.
    assert spec["initProvider"] == {"initialNodeCount": 2}


@pytest.mark.parametrize(
    ("source", "provisioning", "key", "at_provider", "ready"),
    [
        pytest.param(
            "EKS",
            EKS_PROVISIONING,
            "eks-nodegroup-h100",
            {"status": "ACTIVE", "scalingConfig": {"desiredSize": 2}},
            2,
            id="an active EKS node group",
        ),
        pytest.param(
            "EKS",
            EKS_PROVISIONING,
            "eks-nodegroup-h100",
            {"status": "CREATING", "scalingConfig": {"desiredSize": 2}},
            0,
            id="an EKS node group being created",
        ),
        pytest.param(
            "GKE",
            GKE_PROVISIONING,
            "gke-nodepool-h100",
            {"nodeCount": 1, "managedInstanceGroupUrls": ["a", "b"]},
            2,
            id="a GKE node pool over two zones",
        ),
    ],
)
def test_capacity_is_what_the_cloud_reports_ready(
    source: str, provisioning: Obj, key: str, at_provider: Obj, ready: int
) -> None:
    composite = cluster(source, {"nodeCount": 2, "minNodes": 1, "maxNodes": 4})
    first = respond(composite, inference_class(provisioning))
    observed = {key: with_status(resources(first)[key], at_provider)}
    rsp = respond(composite, inference_class(provisioning), observed)
    (pool,) = rsp["desired"]["composite"]["resource"]["status"]["capacity"]["pools"]
    assert (pool["nodes"], pool["maxNodes"]) == (ready, 4)


# A qualified name Kubernetes takes as a taint key, 64 characters long.
LONG_TAINT_KEY = "inference.platform-teams.example.com/dedicated-for-model-serving"
BOTTLEROCKET: Obj = {
    **EKS_PROVISIONING,
    "eks": {**EKS_PROVISIONING["eks"], "amiType": "BOTTLEROCKET_x86_64_NVIDIA"},
}
BAD = [
    pytest.param(
        {"nodeCount": 1},
        inference_class(BOTTLEROCKET),
        "spec.nodePools[0].className: InferenceClass 'h100' claims NVIDIA GPUs through DRA "
        "on spec.provisioning.eks.amiType 'BOTTLEROCKET_x86_64_NVIDIA'",
        id="a Bottlerocket NVIDIA AMI, whose device plugin the DRA driver cannot run beside",
    ),
    pytest.param(
        {"nodeCount": 1},
        inference_class(None),
        "spec.nodePools[0].className: InferenceClass 'h100' has no spec.provisioning",
        id="a class without provisioning",
    ),
    pytest.param(
        {"nodeCount": 1},
        inference_class(GKE_PROVISIONING),
        "spec.nodePools[0].className: InferenceClass 'h100' has no spec.provisioning.eks",
        id="a class for another cloud",
    ),
    pytest.param(
        {"nodeCount": 1, "minNodes": 3, "maxNodes": 2},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].maxNodes: must be at least minNodes (3), not 2",
        id="maxNodes below minNodes",
    ),
    pytest.param(
        {"nodeCount": 5, "minNodes": 0, "maxNodes": 2},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].nodeCount: must be between minNodes and maxNodes (0..2), not 5",
        id="nodeCount outside the range",
    ),
    pytest.param(
        {"nodeCount": 0, "minNodes": 0, "maxNodes": 0},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].maxNodes: must be at least 1",
        id="an EKS group that may never have a node",
    ),
    pytest.param(
        {"nodeCount": 1, "minNodes": 0, "maxNodes": 3},
        inference_class(EKS_PROVISIONING),
        "spec.nodePools[0].minNodes: must be at least 1: InferenceClass 'h100' claims "
        "devices through DRA",
        id="an autoscaled EKS group of DRA devices that may shrink to zero",
    ),
    pytest.param(
        {"nodeCount": 1},
        {
            **inference_class(EKS_PROVISIONING),
            "spec": {
                **inference_class(EKS_PROVISIONING)["spec"],
                "nodeTaints": [{"key": LONG_TAINT_KEY, "effect": "NoSchedule"}],
            },
        },
        f"spec.nodePools[0].className: InferenceClass 'h100' declares the node taint "
        f"'{LONG_TAINT_KEY}'; an EKS node group's taint keys are at most 63 characters",
        id="a class taint key longer than EKS takes",
    ),
]


@pytest.mark.parametrize(
    ("source", "provisioning", "claim"),
    [("EKS", EKS_PROVISIONING, "Synthetic"), ("GKE", GKE_PROVISIONING, "DRA")],
)
def test_a_pool_scales_from_zero_where_its_autoscaler_can_grow_it(
    source: str, provisioning: Obj, claim: str
) -> None:
    # EKS's autoscaler grows from zero what claims nothing through DRA; GKE's grows DRA pools.
    klass = inference_class(provisioning)
    klass["spec"]["devices"][0]["claim"] = claim
    rsp = respond(cluster(source, {"nodeCount": 0, "minNodes": 0, "maxNodes": 3}), klass)
    assert condition(rsp, "Provisioned")["reason"] == "Provisioning"


@pytest.mark.parametrize(("pool", "klass", "message"), BAD)
def test_bad_input_names_the_field_and_keeps_the_node_group(
    pool: Obj, klass: Obj, message: str
) -> None:
    good = respond(cluster("EKS", {"nodeCount": 1}), inference_class(EKS_PROVISIONING))
    running = with_status(
        resources(good)["eks-nodegroup-h100"],
        {"status": "ACTIVE", "scalingConfig": {"desiredSize": 1}},
    )
    rsp = respond(cluster("EKS", pool), klass, {"eks-nodegroup-h100": running})
    provisioned = condition(rsp, "Provisioned")
    assert (provisioned["status"], provisioned["reason"]) == (
        "STATUS_CONDITION_FALSE",
        "InvalidProvisioning",
    )
    assert message in provisioned["message"]
    assert any(message in r.get("message", "") for r in rsp.get("results", []))
    kept = resources(rsp)["eks-nodegroup-h100"]
    assert kept["spec"] == resources(good)["eks-nodegroup-h100"]["spec"]
    # The rest of the cluster is composed as before.
    assert set(resources(good)) <= set(resources(rsp))
    # Its node group still runs its node: the pool's capacity says so.
    pools = rsp["desired"]["composite"]["resource"]["status"]["capacity"]["pools"]
    assert [p["nodes"] for p in pools if p["name"] == "h100"] == [1]


def test_a_replica_placed_here_keeps_the_cluster_and_its_kubeconfig() -> None:
    replica = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": "chat-0",
            "namespace": "team-a",
            "labels": {"modelplane.ai/cluster": NAME},
        },
        "spec": {
            "clusterName": NAME,
            "deploymentName": "chat",
            "index": 0,
            "workers": {
                "nodePoolName": "h100",
                "template": {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}},
            },
        },
    }
    composite = cluster("EKS", {"nodeCount": 1})
    req = request(
        composite,
        required={
            "inferenceclass-h100": [inference_class(EKS_PROVISIONING)],
            "modelreplicas": [replica],
            "replica-objects": [],
        },
    )
    rsp = as_dict(run(FunctionRunner(), req))
    usages = [r for k, r in resources(rsp).items() if k.startswith("usage-cloud-replica-")]
    protected = sorted(
        (u["spec"]["of"]["kind"], u["spec"]["of"]["resourceRef"]["name"]) for u in usages
    )
    assert protected == [("Cluster", NAME), ("ClusterAuth", NAME)]
    for usage in usages:
        assert usage["metadata"]["namespace"] == "team-a"
        assert usage["spec"]["by"] == {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelReplica",
            "resourceRef": {"name": "chat-0"},
        }
        assert usage["spec"]["replayDeletion"] is True


def test_the_autoscaler_starts_only_once_its_pod_identity_exists() -> None:
    composite = cluster("EKS", {"nodeCount": 1, "minNodes": 1, "maxNodes": 3})
    klass = inference_class(EKS_PROVISIONING)
    first = resources(respond(composite, klass))
    # Pod Identity sets a pod's credentials when it is admitted, so the release waits,
    # and so does every Usage naming it.
    assert "eks-autoscaler-pod-identity" in first
    assert not [k for k in first if "autoscaler-release" in k]
    association = with_status(first["eks-autoscaler-pod-identity"], {})
    system = with_status(first["eks-nodegroup-system"], {"status": "ACTIVE"})
    both = {"eks-autoscaler-pod-identity": association, "eks-nodegroup-system": system}
    ready = resources(respond(composite, klass, both))
    release = ready["eks-autoscaler-release"]
    assert [k for k in ready if k.startswith("usage-cloud-") and "autoscaler-release" in k]
    # Once composed, it stays, whatever the association reports later.
    lost = deepcopy(association)
    lost["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "Creating"}]
    observed = {"eks-autoscaler-pod-identity": lost, "eks-autoscaler-release": release}
    assert resources(respond(composite, klass, observed))["eks-autoscaler-release"] == release


@pytest.mark.parametrize(
    ("source", "provisioning", "key"),
    [
        ("EKS", EKS_PROVISIONING, "eks-nodegroup-system"),
        ("GKE", GKE_PROVISIONING, "gke-nodepool-system"),
    ],
)
def test_a_pool_may_not_take_the_system_groups_name(
    source: str, provisioning: Obj, key: str
) -> None:
    composite = cluster(source, {"nodeCount": 1})
    klass = inference_class(provisioning)
    system = resources(respond(composite, klass))[key]
    composite["spec"]["nodePools"][0]["name"] = "system"
    rsp = respond(composite, klass)
    provisioned = condition(rsp, "Provisioned")
    assert provisioned["status"] == "STATUS_CONDITION_FALSE"
    assert "spec.nodePools[0].name: 'system' is reserved" in provisioned["message"]
    assert any("spec.nodePools[0].name" in r.get("message", "") for r in rsp["results"])
    assert resources(rsp)[key] == system
    # What exists under the key is kept as it is, not changed in place.
    running = with_status(
        system, {"status": "ACTIVE", "scalingConfig": {"desiredSize": 2}, "nodeCount": 2}
    )
    running["spec"]["forProvider"]["version"] = "1.33"
    got = respond(composite, klass, {key: running})
    kept = resources(got)[key]
    assert kept["spec"] == running["spec"]
    # The system group's nodes are not the refused pool's capacity.
    pools = got["desired"]["composite"]["resource"]["status"]["capacity"]["pools"]
    assert [p["nodes"] for p in pools if p["name"] == "system"] in ([], [0])


def test_every_release_retries_a_failed_install() -> None:
    # provider-helm leaves a failed release failed unless `rollbackLimit` is set: an
    # install that timed out while nodes came up would never be retried.
    composite = cluster("EKS", {"nodeCount": 1, "minNodes": 1, "maxNodes": 3})
    composite["spec"]["stack"] = {"mode": "Managed"}
    klass = inference_class(EKS_PROVISIONING)
    first = resources(respond(composite, klass))
    observed = {
        key: with_status(first[key], {"status": "ACTIVE"})
        for key in ("eks-autoscaler-pod-identity", "eks-nodegroup-system")
    }
    composed = resources(respond(composite, klass, observed))
    releases = {k: r for k, r in composed.items() if r["kind"] == "Release"}
    assert "eks-autoscaler-release" in releases
    assert any(k.startswith("release-") for k in releases)
    assert {k: r["spec"].get("rollbackLimit") for k, r in releases.items()} == dict.fromkeys(
        releases, 10
    )


@pytest.mark.parametrize(
    ("source", "provisioning", "system"),
    [
        ("EKS", EKS_PROVISIONING, "eks-nodegroup-system"),
        ("GKE", GKE_PROVISIONING, "gke-nodepool-system"),
    ],
)
def test_no_release_is_installed_before_the_system_nodes_are_ready(
    source: str, provisioning: Obj, system: str
) -> None:
    # A chart installed with `wait` on a cluster whose nodes are still coming up times
    # out and fails: a created cluster's releases start once its system group is Ready.
    composite = cluster(source, {"nodeCount": 1, "minNodes": 1, "maxNodes": 3})
    composite["spec"]["stack"] = {"mode": "Managed"}
    klass = inference_class(provisioning)
    first = respond(composite, klass)
    assert not [k for k, r in resources(first).items() if r["kind"] == "Release"]
    stack = condition(first, "StackReady")
    assert stack["reason"] == "InstallingStack"
    assert "wait for the cluster's system nodes" in stack["message"]
    group = with_status(resources(first)[system], {"status": "ACTIVE"})
    ready = resources(respond(composite, klass, {system: group}))
    composed = {k: r for k, r in ready.items() if k.startswith("release-")}
    assert composed
    if source == "EKS":
        # The autoscaler also waits for its Pod Identity association.
        assert "eks-autoscaler-release" not in ready
    # Once composed, a release stays, whatever the system group reports later.
    down = deepcopy(group)
    down["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "Updating"}]
    again = resources(respond(composite, klass, {system: down, **composed}))
    assert {k: again[k] for k in composed} == composed


@pytest.mark.parametrize(
    ("source", "provisioning", "key", "at_provider"),
    [
        (
            "EKS",
            EKS_PROVISIONING,
            "eks-nodegroup-h100",
            {"status": "ACTIVE", "scalingConfig": {"desiredSize": "lots"}},
        ),
        ("GKE", GKE_PROVISIONING, "gke-nodepool-h100", {"nodeCount": "lots"}),
    ],
)
def test_a_size_the_world_reports_that_is_no_count_fails_nothing(
    source: str, provisioning: Obj, key: str, at_provider: Obj
) -> None:
    # Only an edited world holds such a size: it reads as "nothing reported", and the
    # cluster is composed as it was, not answered with an internal error.
    composite = cluster(source, {"nodeCount": 1})
    klass = inference_class(provisioning)
    good = respond(composite, klass)
    rsp = respond(composite, klass, {key: with_status(resources(good)[key], at_provider)})
    assert not [r for r in rsp.get("results", []) if r.get("severity") == "SEVERITY_FATAL"]
    assert resources(rsp) == resources(good)
    pools = rsp["desired"]["composite"]["resource"]["status"]["capacity"]["pools"]
    assert [p["nodes"] for p in pools if p["name"] == "h100"] in ([], [0])


@pytest.mark.parametrize(
    ("source", "provisioning", "key", "at_provider"),
    [
        (
            "EKS",
            EKS_PROVISIONING,
            "eks-nodegroup-h100",
            {"status": "ACTIVE", "scalingConfig": {"desiredSize": 1}},
        ),
        ("GKE", GKE_PROVISIONING, "gke-nodepool-h100", {"nodeCount": 1}),
    ],
)
def test_a_pool_that_may_never_have_a_node_is_refused_on_every_cloud(
    source: str, provisioning: Obj, key: str, at_provider: Obj
) -> None:
    # Both clouds refuse a node group or pool whose maximum is zero: named on
    # Provisioned with a Warning event, and the running pool kept as it is.
    klass = inference_class(provisioning)
    good = respond(cluster(source, {"nodeCount": 1}), klass)
    running = with_status(resources(good)[key], at_provider)
    rsp = respond(cluster(source, {"nodeCount": 0}), klass, {key: running})
    provisioned = condition(rsp, "Provisioned")
    assert (provisioned["status"], provisioned["reason"]) == (
        "STATUS_CONDITION_FALSE",
        "InvalidProvisioning",
    )
    assert provisioned["message"].startswith("spec.nodePools[0].maxNodes: must be at least 1")
    (event,) = [r for r in rsp["results"] if "spec.nodePools[0].maxNodes" in r["message"]]
    assert event["severity"] == "SEVERITY_WARNING"
    assert resources(rsp)[key]["spec"] == resources(good)[key]["spec"]


@pytest.mark.parametrize(
    ("source", "provisioning", "field", "running", "path"),
    [
        ("EKS", EKS_PROVISIONING, "version", {"version": "1.34"}, "spec.cluster.eks.version"),
        ("EKS", EKS_PROVISIONING, "version", {"version": "1.34"}, "spec.kubernetesVersion"),
        (
            "GKE",
            GKE_PROVISIONING,
            "minMasterVersion",
            {"masterVersion": "1.34.1-gke.1200"},
            "spec.cluster.gke.version",
        ),
    ],
)
def test_a_version_the_cloud_cannot_reach_keeps_the_running_one(
    source: str, provisioning: Obj, field: str, running: Obj, path: str
) -> None:
    # Both clouds upgrade one minor at a time and never downgrade: a jump is named on
    # Provisioned, and the cluster (and every EKS node group) keeps its version.
    klass = inference_class(provisioning)
    composite = cluster(source, {"nodeCount": 1})
    good = resources(respond(composite, klass))
    key = f"{source.lower()}-cluster"
    observed = {key: with_status(good[key], running)}
    if path == "spec.kubernetesVersion":
        composite["spec"]["kubernetesVersion"] = "1.36"
    else:
        composite["spec"]["cluster"][source.lower()]["version"] = "1.36"
    rsp = respond(composite, klass, observed)
    provisioned = condition(rsp, "Provisioned")
    assert (provisioned["status"], provisioned["reason"]) == (
        "STATUS_CONDITION_FALSE",
        "InvalidProvisioning",
    )
    assert provisioned["message"].startswith(f"{path}: cannot change from the running 1.34")
    (event,) = [r for r in rsp["results"] if r["message"].startswith(path)]
    assert (event["severity"], event["reason"]) == ("SEVERITY_WARNING", "UnsupportedVersionChange")
    assert resources(rsp) == good
    # One minor up is made.
    composite["spec"]["kubernetesVersion"] = "1.35"
    composite["spec"]["cluster"][source.lower()].pop("version", None)
    raised = resources(respond(composite, klass, observed))
    assert raised[key]["spec"]["forProvider"][field] == "1.35"


def test_the_clusters_gateway_keeps_envoy_gateway_and_the_cluster_until_it_is_gone() -> None:
    # Envoy Gateway's proxy Service (a cloud load balancer in the cluster's network) is
    # owned by the GatewayClass, not the Gateway: the Gateway must be deleted while
    # the controller and the cluster still run, or the load balancer is orphaned.
    composite = cluster("EKS", {"nodeCount": 1})
    composite["spec"]["stack"] = {"mode": "Managed"}
    composite["spec"]["gateway"] = {"gatewayClassName": "eg"}
    klass = inference_class(EKS_PROVISIONING)
    composed = resources(respond(composite, klass, system_ready("EKS")))
    gateway = composed["gateway"]
    assert "release-envoy-gateway" in composed
    by_gateway = {
        (u["spec"]["of"]["kind"], u["spec"]["of"]["resourceRef"]["name"])
        for u in composed.values()
        if u["kind"] == "Usage"
        and u["spec"]["by"]
        == {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
            "kind": "Object",
            "resourceRef": {"name": gateway["metadata"]["name"]},
        }
    }
    envoy = composed["release-envoy-gateway"]["metadata"]["name"]
    assert by_gateway == {("Cluster", NAME), ("ClusterAuth", NAME), ("Release", envoy)}
    for usage in composed.values():
        if usage["kind"] == "Usage" and usage["spec"]["by"]["kind"] == "Object":
            assert usage["metadata"]["namespace"] == gateway["metadata"]["namespace"]
            assert usage["spec"]["replayDeletion"] is True


def named(name: str, pool: str, source: str) -> Obj:
    composite = cluster(source, {"nodeCount": 1})
    composite["metadata"]["name"] = name
    composite["spec"]["nodePools"][0]["name"] = pool
    return composite


@pytest.mark.parametrize(
    ("source", "provisioning", "kind"),
    [("EKS", EKS_PROVISIONING, "NodeGroup"), ("GKE", GKE_PROVISIONING, "NodePool")],
)
def test_two_clusters_pools_never_share_a_managed_resource_name(
    source: str, provisioning: Obj, kind: str
) -> None:
    # `gpu` + `us-east-l4` and `gpu-us-east` + `l4` are both `gpu-us-east-l4` in their
    # own cloud clusters (node group names are scoped per cluster), but every created
    # cluster's managed resources share one namespace: the later one's pool would
    # never be built.
    klass = inference_class(provisioning)
    names: list[str] = []
    for name, pool in (("gpu", "us-east-l4"), ("gpu-us-east", "l4")):
        composed = resources(respond(named(name, pool, source), klass))
        (group,) = [
            r for k, r in composed.items() if r["kind"] == kind and not k.endswith("-system")
        ]
        assert group["metadata"]["annotations"] == {"crossplane.io/external-name": "gpu-us-east-l4"}
        names.append(group["metadata"]["name"])
    assert names[0] != names[1]


def test_a_node_group_observed_under_its_old_name_keeps_it() -> None:
    # Renaming a managed resource would have Crossplane delete it, and the node group.
    klass = inference_class(EKS_PROVISIONING)
    composite = cluster("EKS", {"nodeCount": 1})
    good = resources(respond(composite, klass))
    old = deepcopy(good["eks-nodegroup-h100"])
    old["metadata"] = {"name": f"{NAME}-h100", "namespace": "modelplane-system"}
    running = with_status(old, {"status": "ACTIVE", "scalingConfig": {"desiredSize": 1}})
    composed = resources(respond(composite, klass, {"eks-nodegroup-h100": running}))
    assert composed["eks-nodegroup-h100"]["metadata"]["name"] == f"{NAME}-h100"
    usages = [
        u for k, u in composed.items() if k == "usage-cloud-eks-cluster-by-eks-nodegroup-h100"
    ]
    assert [u["spec"]["by"]["resourceRef"]["name"] for u in usages] == [f"{NAME}-h100"]


def test_the_nat_gateway_waits_for_the_internet_gateway() -> None:
    # A NAT gateway made before its VPC has an internet gateway fails, and AWS deletes
    # it only about an hour later: the nodes' subnets would have no way out until then.
    composite = cluster("EKS", {"nodeCount": 1})
    klass = inference_class(EKS_PROVISIONING)
    first = resources(respond(composite, klass))
    assert "eks-network-internet-gateway" in first
    assert "eks-network-nat-gateway" not in first
    assert not [k for k in first if k.startswith("usage-") and "nat-gateway-by" in k]
    igw = with_status(first["eks-network-internet-gateway"], {})
    ready = resources(respond(composite, klass, {"eks-network-internet-gateway": igw}))
    assert ready["eks-network-nat-gateway"]["kind"] == "NATGateway"
    assert "usage-cloud-eks-network-nat-gateway-by-eks-cluster" in ready


@pytest.mark.parametrize(
    ("auth", "status", "reason"),
    [
        (None, "STATUS_CONDITION_UNKNOWN", "Provisioning"),
        ({"status": "False", "reason": "Creating"}, "STATUS_CONDITION_UNKNOWN", "Provisioning"),
        ({"status": "True", "reason": "Available"}, "STATUS_CONDITION_FALSE", "ClusterUnreachable"),
        (
            {"status": "False", "reason": "Unavailable"},
            "STATUS_CONDITION_FALSE",
            "ClusterUnreachable",
        ),
    ],
)
def test_a_cluster_being_created_is_not_called_unreachable(
    auth: Obj | None, status: str, reason: str
) -> None:
    # Its Objects cannot connect until its kubeconfig is written (EKS takes 10 to 15
    # minutes): Reachable says it is being created rather than raise an outage; once
    # the kubeconfig writer has existed, Objects that stop syncing are an outage again.
    composite = cluster("EKS", {"nodeCount": 1})
    klass = inference_class(EKS_PROVISIONING)
    first = resources(respond(composite, klass))
    failing = {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": "connect failed: cannot create new client: dial tcp 10.0.0.1:443: i/o timeout",
        "lastTransitionTime": "2020-01-01T00:00:00Z",
    }
    observed = {
        k: {**r, "status": {"conditions": [failing]}}
        for k, r in first.items()
        if r["kind"] == "Object"
    }
    assert observed
    if auth is not None:
        writer = deepcopy(first["eks-cluster-auth"])
        writer["status"] = {"conditions": [{"type": "Ready", **auth}]}
        observed["eks-cluster-auth"] = writer
    rsp = respond(composite, klass, observed)
    reachable = condition(rsp, "Reachable")
    assert (reachable["status"], reachable["reason"]) == (status, reason)
    published = rsp["desired"]["composite"]["resource"]["status"]
    assert ("reachability" in published) == (reason == "ClusterUnreachable")
