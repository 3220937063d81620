"""Object names: stable, unique, within Kubernetes limits (tenant namespaces: conventions)."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.core.issues import InvalidInputError
from modelplane.core.naming import is_dns_label
from modelplane.core.vocabulary import LABEL_TENANT_NAMESPACE, Reason
from modelplane.workloads import render_replica

from .inputs import read_cluster, read_replica

DNS_LABEL = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True)
# Replica names are DNS subdomains, but must also be label values (<= 63).
REPLICA_NAME = st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?", fullmatch=True).filter(
    lambda s: ".." not in s and ".-" not in s and "-." not in s
)

LIMITS = {"Deployment": 63, "LeaderWorkerSet": 39, "LLMInferenceService": 21}


def test_namespace_object(build: Any) -> None:
    objects = render_replica(read_replica(build.replica()), read_cluster(build.cluster())).objects()
    namespace = next(o for o in objects if o.key == "namespace").manifest
    assert namespace == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": "mp-ml-team-prod",
            "labels": {
                "app.kubernetes.io/managed-by": "modelplane",
                LABEL_TENANT_NAMESPACE: "ml-team-prod",
                # Without tenancy labels: teams share GPU nodes, so no host access.
                "pod-security.kubernetes.io/enforce": "baseline",
            },
        },
    }
    # Not `default`, and every namespaced object goes into it.
    for obj in objects:
        if obj.key != "namespace":
            assert obj.manifest["metadata"]["namespace"] == "mp-ml-team-prod"


def test_namespace_object_follows_the_clusters_tenancy(build: Any) -> None:
    cluster = build.cluster()
    cluster["spec"]["tenancy"] = {
        "namespace": "{{ .Cluster }}-{{ .Namespace }}",
        # The platform's level replaces the default one.
        "labels": {"pod-security.kubernetes.io/enforce": "privileged", "team": "{{ .Namespace }}"},
        "annotations": {"example.com/cost-centre": "cc-{{ .Namespace }}"},
    }
    objects = render_replica(read_replica(build.replica()), read_cluster(cluster)).objects()
    namespace = next(o for o in objects if o.key == "namespace").manifest
    assert namespace["metadata"] == {
        "name": "prod-us-east-ml-team-prod",
        "labels": {
            "app.kubernetes.io/managed-by": "modelplane",
            LABEL_TENANT_NAMESPACE: "ml-team-prod",
            "pod-security.kubernetes.io/enforce": "privileged",
            "team": "ml-team-prod",
        },
        "annotations": {"example.com/cost-centre": "cc-ml-team-prod"},
    }
    for obj in objects:
        if obj.key != "namespace":
            assert obj.manifest["metadata"]["namespace"] == "prod-us-east-ml-team-prod"


def test_a_tenancy_the_namespace_cannot_fit_is_named_on_the_cluster(build: Any) -> None:
    cluster = build.cluster()
    cluster["spec"]["tenancy"] = {"namespace": "{{ .Namespace }}-models"}
    replica = build.replica(namespace="n" * 60)
    with pytest.raises(InvalidInputError) as caught:
        render_replica(read_replica(replica), read_cluster(cluster))
    (issue,) = caught.value.issues
    assert issue.path == "spec.clusterName"
    assert issue.reason == Reason.INVALID_TENANCY
    assert "InferenceCluster 'prod-us-east' spec.tenancy.namespace: renders" in issue.message


def _names(build: Any, replica_name: str, backend: str, topology: dict[str, int]) -> list[Any]:
    obj = build.replica(
        name=replica_name,
        decode=build.role(topology=topology, count=12),
        prefill=build.role(),
    )
    return render_replica(read_replica(obj), read_cluster(build.cluster(backend=backend))).objects()


@given(REPLICA_NAME, st.sampled_from(["Native", "KServe"]), st.sampled_from([1, 2, 16]))
def test_every_name_fits_its_kind(
    build: Any, replica_name: str, backend: str, pipeline: int
) -> None:
    for obj in _names(build, replica_name, backend, {"pipeline": pipeline}):
        name = obj.manifest["metadata"]["name"]
        assert is_dns_label(name), name
        limit = LIMITS.get(obj.manifest["kind"], 63)
        assert len(name) <= limit


def test_leader_worker_set_names_leave_room_for_statefulset_labels(build: Any) -> None:
    replica_name = "r" * 63
    objects = _names(build, replica_name, "Native", {"pipeline": 16})
    lws = next(o for o in objects if o.manifest["kind"] == "LeaderWorkerSet").manifest
    name, groups = lws["metadata"]["name"], lws["spec"]["replicas"]
    size = lws["spec"]["leaderWorkerTemplate"]["size"]
    last_group, last_rank = str(groups - 1), str(size - 1)
    # Worker StatefulSet `<lws>-<group>` gets a `<sts>-<hash (<=10)>` revision label,
    # and each worker pod `<lws>-<group>-<rank>` a pod-name label: both <= 63.
    assert len(f"{name}-{last_group}-{'h' * 10}") <= 63
    assert len(f"{name}-{last_group}-{last_rank}") <= 63


def test_readable_names_when_they_fit(build: Any) -> None:
    objects = {o.key: o.manifest for o in _names(build, "kimi-k2-5ab63", "Native", {"pipeline": 2})}
    assert objects["workload-decode"]["metadata"]["name"] == "kimi-k2-5ab63-decode"
    assert objects["workload-prefill"]["metadata"]["name"] == "kimi-k2-5ab63-prefill"
    assert objects["claims-decode"]["metadata"]["name"] == "kimi-k2-5ab63-decode-devices"


def test_dotted_replica_names_become_dns_labels(build: Any) -> None:
    objects = _names(build, "kimi.k2.5ab63", "Native", {"pipeline": 1})
    for obj in objects:
        assert is_dns_label(obj.manifest["metadata"]["name"])


def test_two_replicas_never_share_a_name(build: Any) -> None:
    names: set[tuple[str, str]] = set()
    for replica_name in ("x" * 60 + "abc", "x" * 60 + "abd", "x" * 59 + "ab.c", "kimi"):
        for obj in _names(build, replica_name, "Native", {"pipeline": 2}):
            if obj.key != "namespace":
                name = (obj.manifest["kind"], obj.manifest["metadata"]["name"])
                assert name not in names
                names.add(name)


def test_no_service_takes_the_name_of_the_headless_service_a_leader_worker_set_makes(
    build: Any,
) -> None:
    gang = build.role(topology={"pipeline": 2})
    obj = build.replica(decode=gang, prefill=gang)
    objects = render_replica(read_replica(obj), read_cluster(build.cluster())).objects()
    lws = {
        o.manifest["metadata"]["name"] for o in objects if o.manifest["kind"] == "LeaderWorkerSet"
    }
    services = {o.manifest["metadata"]["name"] for o in objects if o.manifest["kind"] == "Service"}
    assert lws == {"kimi-k2-5ab63-decode", "kimi-k2-5ab63-prefill"}
    assert services == {"kimi-k2-5ab63", "kimi-k2-5ab63-prefill-http"}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": "r" * 64}, "metadata.name"),
        ({"deployment": "d" * 64}, "spec.deploymentName"),
    ],
)
def test_identities_too_long_for_labels_are_refused(
    build: Any, overrides: dict[str, str], field: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        render_replica(read_replica(build.replica(**overrides)), read_cluster(build.cluster()))
    assert (caught.value.issues[0].path, caught.value.issues[0].reason) == (
        field,
        Reason.NAME_TOO_LONG,
    )
