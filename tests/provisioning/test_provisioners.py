"""The provisioners, as pure functions: every cloud behind the one registry, names that
fit each cloud, and pools sized within their bounds, whatever the input."""

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from modelplane_models.inference_class import InferenceClass, Provisioning
from modelplane_models.inference_cluster import InferenceCluster

from modelplane.core.naming import HELM_RELEASE_MAX, is_dns_label
from modelplane.provisioning import PROVISIONERS, ClusterPlan, PoolPlan, check_pools
from modelplane.provisioning.model import ObservedVersion
from modelplane.provisioning.names import cloud_name
from modelplane.provisioning.versions import judge

ROOT = Path(__file__).resolve().parents[2]
RAW: dict[str, dict[str, Any]] = {
    "EKS": {"provider": "EKS", "eks": {"instanceType": "p5.48xlarge"}},
    "GKE": {
        "provider": "GKE",
        "gke": {
            "machineType": "a3-highgpu-8g",
            "accelerator": {"type": "nvidia-h100-80gb", "count": 8},
        },
    },
}
BLOCKS: dict[str, dict[str, Any]] = {
    "EKS": {"eks": {"region": "us-east-1", "providerConfigRef": {"name": "aws"}}},
    "GKE": {
        "gke": {
            "project": "my-project",
            "location": "us-central1",
            "providerConfigRef": {"name": "gcp"},
        }
    },
}
CLASSES = {source: Provisioning.model_validate(raw) for source, raw in RAW.items()}


def test_every_source_the_xrd_admits_but_existing_has_a_provisioner() -> None:
    xrd = yaml.safe_load((ROOT / "apis/inferenceclusters/definition.yaml").read_text())
    (version,) = xrd["spec"]["versions"]
    cluster = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["cluster"]
    sources = set(cluster["properties"]["source"]["enum"]) - {"Existing"}
    assert set(PROVISIONERS) == sources
    assert all(p.source == s for s, p in PROVISIONERS.items())


names = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?(\.[a-z0-9]{1,10}){0,2}", fullmatch=True)


@given(
    cluster=names,
    suffix=st.from_regex(r"[a-z0-9-]{0,20}", fullmatch=True),
    limit=st.sampled_from([30, 40, 63, 64, 100]),
)
def test_a_cloud_name_fits_its_cloud(cluster: str, suffix: str, limit: int) -> None:
    name = cloud_name(cluster, suffix.strip("-"), limit)
    assert len(name) <= limit
    assert name[0].isalpha()
    assert is_dns_label(name) or limit > 63
    assert name == cloud_name(cluster, suffix.strip("-"), limit)


def test_cloud_names_of_different_clusters_differ() -> None:
    assert cloud_name("a.b", "x") != cloud_name("a-b", "x")
    long = "c" * 60
    assert cloud_name(long + "1", "nodes", 30) != cloud_name(long + "2", "nodes", 30)


def _cluster(source: str, pools: list[dict[str, Any]]) -> InferenceCluster:
    return InferenceCluster.model_validate(
        {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceCluster",
            "metadata": {"name": "gpu"},
            "spec": {"cluster": {"source": source, **BLOCKS[source]}, "nodePools": pools},
        }
    )


sizes = st.tuples(
    st.integers(0, 20), st.integers(0, 20) | st.none(), st.integers(0, 20) | st.none()
)


@given(source=st.sampled_from(sorted(PROVISIONERS)), size=sizes)
def test_a_pool_is_built_within_its_bounds_or_named_as_bad(
    source: str, size: tuple[int, int | None, int | None]
) -> None:
    count, low, high = size
    pool: dict[str, Any] = {"name": "p", "className": "c", "nodeCount": count}
    if low is not None:
        pool["minNodes"] = low
    if high is not None:
        pool["maxNodes"] = high
    cluster = _cluster(source, [pool])
    assert cluster.spec is not None
    klass = InferenceClass.model_validate(
        {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceClass",
            "metadata": {"name": "c"},
            "spec": {
                "provisioning": RAW[source],
                "devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "g"}],
            },
        }
    )
    check = check_pools(source, list(cluster.spec.nodePools), {"c": klass})
    lo = count if low is None else low
    hi = count if high is None else high
    # Every cloud refuses a pool that may never have a node (check_pools, for all).
    if lo <= count <= hi and hi >= 1:
        (plan,) = check.plans
        assert (plan.min_nodes, plan.desired, plan.max_nodes) == (lo, count, hi)
        assert check.issues == []
    else:
        assert check.plans == []
        (issue,) = check.issues
        assert issue.path in ("spec.nodePools[0].maxNodes", "spec.nodePools[0].nodeCount")


@given(
    source=st.sampled_from(sorted(PROVISIONERS)),
    bounds=st.tuples(st.integers(1, 8), st.integers(0, 8)),
)
def test_composing_is_deterministic_and_every_body_is_namespaced(
    source: str, bounds: tuple[int, int]
) -> None:
    high, extra = bounds
    low = min(high, extra)
    provisioner = PROVISIONERS[source]
    pools = (PoolPlan("p", "c", low, low, high, CLASSES[source]),)
    plan = ClusterPlan(
        "gpu",
        "modelplane-system",
        "1.34",
        _cluster(source, [{"name": "p", "className": "c", "nodeCount": low}]),
        pools,
    )
    first, second = provisioner.compose(plan), provisioner.compose(plan)
    assert first.resources == second.resources
    assert all(provisioner.owns(key) for key in first.resources)
    assert first.pools == {"p": provisioner.pool_key("p")}
    for body in first.resources.values():
        assert body["metadata"]["namespace"] == "modelplane-system"
        assert body["spec"]["providerConfigRef"]["kind"] == "ClusterProviderConfig"
    assert first.cluster in first.resources and first.connection in first.resources
    assert set(first.network) <= set(first.resources)


def _eks(name: str) -> dict[str, Any]:
    """What the EKS provisioner composes for a cluster `name` with one fixed pool."""
    plan = ClusterPlan(
        name,
        "modelplane-system",
        "1.34",
        _cluster("EKS", [{"name": "p", "className": "c", "nodeCount": 1}]),
        (PoolPlan("p", "c", 1, 1, 1, CLASSES["EKS"]),),
    )
    return PROVISIONERS["EKS"].compose(plan).resources


@pytest.mark.parametrize(
    ("running", "sent"),
    [
        (None, None),  # not created yet: initProvider's size
        (3, None),  # inside the bounds: the autoscaler's
        (1, 2),  # below the new minimum: moved up with it
        (6, 4),  # above the new maximum: moved down with it
    ],
)
def test_an_autoscaled_eks_group_sends_a_size_only_to_follow_its_bounds(
    running: int | None, sent: int | None
) -> None:
    provisioner = PROVISIONERS["EKS"]
    key = provisioner.pool_key("p")
    observed = {} if running is None else {key: _group_running(running)}
    plan = ClusterPlan(
        "gpu",
        "modelplane-system",
        "1.34",
        _cluster("EKS", [{"name": "p", "className": "c", "nodeCount": 2}]),
        (PoolPlan("p", "c", 2, 2, 4, CLASSES["EKS"]),),
        observed=observed,
    )
    group = provisioner.compose(plan).resources[key]
    assert group["spec"]["initProvider"] == {"scalingConfig": {"desiredSize": 2}}
    scaling = group["spec"]["forProvider"]["scalingConfig"]
    assert scaling.get("desiredSize") == sent
    assert (scaling["minSize"], scaling["maxSize"]) == (2, 4)


def _group_running(size: int) -> dict[str, Any]:
    return {"status": {"atProvider": {"status": "ACTIVE", "scalingConfig": {"desiredSize": size}}}}


@pytest.mark.parametrize("name", ["gpu", "gpu.us-east", "1gpu", "g" * 120])
def test_subnets_are_tagged_with_the_eks_clusters_own_name(name: str) -> None:
    # The AWS cloud provider keeps only subnets tagged for its own cluster (or for none).
    resources = _eks(name)
    eks_name = resources["eks-cluster"]["metadata"]["name"]
    subnets = [r for r in resources.values() if r["kind"] == "Subnet"]
    assert subnets
    for subnet in subnets:
        tags = subnet["spec"]["forProvider"]["tags"]
        assert [k for k in tags if k.startswith("kubernetes.io/cluster/")] == [
            f"kubernetes.io/cluster/{eks_name}"
        ]


@pytest.mark.parametrize(
    "name", ["gpu", "gpu.us-east", "inference-gpu-production-us-east-1-primary"]
)
def test_the_autoscaler_release_name_is_one_helm_accepts(name: str) -> None:
    release = _eks(name)["eks-autoscaler-release"]["metadata"]["name"]
    assert len(release) <= HELM_RELEASE_MAX and is_dns_label(release)
    assert release == _eks(name)["eks-autoscaler-release"]["metadata"]["name"]
    if name == "gpu":
        assert release == "gpu-cluster-autoscaler"  # a name that fits is not renamed


def test_the_eks_autoscaler_sees_dra_claims() -> None:
    # Every GPU replica claims its GPUs through DRA; the chart's own ClusterRole has no
    # resource.k8s.io rule, and the autoscaler ignores claims unless told otherwise.
    values = _eks("gpu")["eks-autoscaler-release"]["spec"]["forProvider"]["values"]
    assert values["extraArgs"]["enable-dynamic-resource-allocation"] is True
    (rule,) = values["rbac"]["additionalRules"]
    assert rule["apiGroups"] == ["resource.k8s.io"]
    assert set(rule["resources"]) >= {"deviceclasses", "resourceclaims", "resourceslices"}
    assert set(rule["verbs"]) == {"get", "list", "watch"}


def reported(at_provider: Any) -> dict[str, Any]:
    return {"status": {"atProvider": at_provider}}


# What a provider reported of a node group (EKS) or pool (GKE) -> the nodes read from it.
# An edited world may hold anything there: what is no count reports nothing, never raises.
READ_BACK = [
    pytest.param("EKS", {"status": "ACTIVE", "scalingConfig": {"desiredSize": 3.0}}, 3, id="eks"),
    pytest.param("EKS", {"status": "ACTIVE", "scalingConfig": {}}, 0, id="eks-no-size"),
    pytest.param("EKS", {"status": "CREATING"}, 0, id="eks-creating"),
    pytest.param(
        "EKS", {"status": "ACTIVE", "scalingConfig": {"desiredSize": "lots"}}, None, id="eks-word"
    ),
    pytest.param(
        "EKS", {"status": "ACTIVE", "scalingConfig": {"desiredSize": 2.5}}, None, id="eks-fraction"
    ),
    pytest.param(
        "EKS", {"status": "ACTIVE", "scalingConfig": {"desiredSize": -1}}, None, id="eks-negative"
    ),
    pytest.param(
        "EKS", {"status": "ACTIVE", "scalingConfig": {"desiredSize": True}}, None, id="eks-bool"
    ),
    pytest.param("EKS", {"status": {"state": "ACTIVE"}}, 0, id="eks-state-not-a-string"),
    pytest.param("GKE", {"nodeCount": 2, "managedInstanceGroupUrls": ["a", "b"]}, 4, id="gke"),
    pytest.param("GKE", {"nodeCount": "lots"}, None, id="gke-word"),
    pytest.param("GKE", {"nodeCount": 2, "managedInstanceGroupUrls": 5}, None, id="gke-groups"),
    pytest.param(
        "GKE",
        {"nodeCount": 2, "autoscaling": {"totalMaxNodeCount": "x"}},
        2,
        id="gke-limit-not-a-count",
    ),
    pytest.param(
        "GKE",
        {"nodeCount": 2, "autoscaling": {"totalMaxNodeCount": float("inf")}},
        2,
        id="gke-limit-infinite",
    ),
]


@pytest.mark.parametrize(("source", "at_provider", "nodes"), READ_BACK)
def test_a_node_group_size_that_is_no_count_reports_nothing(
    source: str, at_provider: dict[str, Any], nodes: int | None
) -> None:
    assert PROVISIONERS[source].ready_nodes(reported(at_provider)) == nodes


# requested, (composed before, running) -> the version composed, and the refusal if any.
VERSION_CHANGES = [
    pytest.param("1.34", (None, None), "1.34", None, id="a new cluster"),
    pytest.param("1.34", ("1.34", "1.34"), "1.34", None, id="unchanged"),
    pytest.param("1.35", ("1.34", "1.34"), "1.35", None, id="one minor up"),
    pytest.param("1.35", ("1.34", None), "1.35", None, id="one up from the composed"),
    pytest.param("1.36", ("1.34", "1.34"), "1.34", "raise it to 1.35 first", id="two up"),
    pytest.param("1.36", ("1.34", None), "1.34", "raise it to 1.35 first", id="two up, unread"),
    pytest.param("1.34", ("1.35", "1.35"), "1.35", "never downgrades", id="a downgrade"),
    pytest.param(
        "1.36", ("1.34", "1.35.2-gke.1200"), "1.36", None, id="one up from an auto-upgrade"
    ),
    pytest.param(
        "1.34",
        ("1.34", "1.35.2-gke.1200"),
        "1.34",
        None,
        id="unchanged behind an auto-upgrade",
    ),
    pytest.param(
        "1.37", ("1.34", "1.35.2-gke.1200"), "1.34", "raise it to 1.36 first", id="gke skip"
    ),
    pytest.param("1.35", ("1.34", "garbage"), "1.35", None, id="running unreadable"),
    pytest.param(
        "1.34", ("1.35", "1.34"), "1.35", "never downgrades", id="undoing an upgrade in flight"
    ),
    pytest.param("1.36", ("1.35", "1.34"), "1.36", None, id="one up from an upgrade in flight"),
    # The cloud refused the composed 1.35 (Synced False): nothing is in flight, so going
    # back to what runs is no downgrade (final-t-d F4).
    pytest.param("1.34", ("1.35", "1.34", True), "1.34", None, id="undoing a refused upgrade"),
    pytest.param(
        "1.36", ("1.35", "1.34", True), "1.35", "raise it to 1.35 first", id="two up, refused"
    ),
    pytest.param("2.0", ("1.34", "1.34"), "1.34", "raise it to 1.35 first", id="a new major"),
    # What is kept is its major.minor, whatever the managed resource's text carried, and
    # an observed string of thousands of digits is no version rather than a raise
    # (final-t-e F1, F2).
    pytest.param("1.34", ("1.36-x", "1.36"), "1.36", "never downgrades", id="kept normalised"),
    pytest.param("1.34", ("1.33", "1." + "1" * 5000), "1.34", None, id="a huge running version"),
]


@pytest.mark.parametrize(("requested", "seen", "composed", "refusal"), VERSION_CHANGES)
def test_a_version_change_the_cloud_cannot_make_keeps_the_composed_version(
    requested: str,
    seen: tuple[str | None, str | None] | tuple[str, str, bool],
    composed: str,
    refusal: str | None,
) -> None:
    observed = ObservedVersion(seen[0], seen[1], refused=len(seen) > 2)
    version, issue = judge("spec.cluster.eks.version", requested, observed)
    assert version == composed
    if refusal is None:
        assert issue is None
    else:
        assert issue is not None
        assert issue.path == "spec.cluster.eks.version"
        assert issue.reason == "UnsupportedVersionChange"
        assert refusal in issue.message
        assert f"the cluster keeps {composed}" in issue.message
