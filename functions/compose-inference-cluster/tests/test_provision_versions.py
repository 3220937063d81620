"""compose-inference-cluster and a created cluster's Kubernetes version: a change the
cloud cannot make keeps the version it runs, which the cluster publishes and checks
its own scheduling for."""

from copy import deepcopy

import pytest

from .provisioned import (
    EKS_PROVISIONING,
    GKE_PROVISIONING,
    Obj,
    cluster,
    condition,
    inference_class,
    resources,
    respond,
    with_status,
)


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
    # The kept version is the one published, and the one the cluster's own scheduling
    # is checked for: 1.34 serves no Workload API, whatever the spec asks.
    assert published_version(rsp) == "1.34"
    # One minor up is made, and published.
    composite["spec"]["kubernetesVersion"] = "1.35"
    composite["spec"]["cluster"][source.lower()].pop("version", None)
    rsp = respond(composite, klass, observed)
    assert resources(rsp)[key]["spec"]["forProvider"][field] == "1.35"
    assert published_version(rsp) == "1.35"


def published_version(rsp: Obj) -> object:
    return rsp["desired"]["composite"]["resource"]["status"].get("kubernetesVersion")


def test_the_cluster_s_scheduling_is_checked_for_the_version_it_keeps() -> None:
    # A refused jump to 1.36 keeps the cluster at 1.34, which serves no Workload API:
    # the gang is not composed for an API the cluster would refuse.
    klass = inference_class(EKS_PROVISIONING)
    composite = deepcopy(cluster("EKS", {"nodeCount": 1}))
    composite["spec"]["scheduling"] = {"provider": "Default", "gang": {"api": "Workload"}}
    good = resources(respond(composite, klass))
    observed = {"eks-cluster": with_status(good["eks-cluster"], {"version": "1.34"})}
    composite["spec"]["cluster"]["eks"]["version"] = "1.36"
    composite["status"] = {"kubernetesVersion": "1.34"}
    rsp = respond(composite, klass, observed)
    assert condition(rsp, "SchedulingConfigured")["reason"] == "GangAPIUnavailable"
    assert published_version(rsp) == "1.34"
    # A cluster held on bad input (its sub-block gone) keeps the version it published.
    del composite["spec"]["cluster"]["eks"]
    held = respond(composite, klass, observed)
    assert condition(held, "Provisioned")["reason"] == "InvalidProvisioning"
    assert published_version(held) == "1.34"
