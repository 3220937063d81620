"""Builders and readers shared by the compose-model-cache tests: inputs, one call,
and what its response composed and reported."""

from typing import Any

from compose_model_cache.fn import CLUSTERS, REPLICAS, FunctionRunner
from google.protobuf.struct_pb2 import Value
from modelplane_models import ModelCache

from modelplane.caching import read_cache
from modelplane.caching.kserve import uri_revision
from modelplane.caching.native import job_revision
from modelplane.core.vocabulary import CONTEXT_NOW
from modelplane_dev.testing import as_dict, request, run

Obj = dict[str, Any]
NOW = "2026-11-26T12:00:00Z"


def cache(uri: str = "hf://org/model", size: str = "200Gi", status: Obj | None = None) -> Obj:
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "ml"},
        "spec": {"uri": uri, "size": size},
    }
    if status is not None:
        obj["status"] = status
    return obj


def cluster(name: str = "east", backend: str = "Native", storage: Obj | None = None) -> Obj:
    spec: Obj = {
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": "k", "namespace": "s"}},
        },
        "backend": {"type": backend},
        "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 1}],
    }
    if storage is not None:
        spec["storage"] = {"modelCache": storage}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"providerConfigRef": {"kind": "ClusterProviderConfig", "name": name}},
    }


def replica(cluster_name: str = "east", namespace: str = "ml") -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": "qwen-1",
            "namespace": namespace,
            "labels": {"modelplane.ai/model-cache": "weights"},
        },
        "spec": {
            "deploymentName": "qwen",
            "clusterName": cluster_name,
            "index": 0,
            "model": {"name": "qwen", "cacheRef": {"name": "weights"}},
            "workers": {"nodePoolName": "h100", "template": {}},
        },
    }


EFS = {"storageClassName": "efs-rwx", "retention": "1h"}


def job_key(attempt: int, composite: Obj | None = None, cluster_name: str = "east") -> str:
    """The composition key of a download Job: its attempt and a digest of its spec."""
    spec = read_cache(ModelCache.model_validate(composite or cache()))
    return f"download-{attempt}-{job_revision(spec)}-{cluster_name}"


def local_key(attempt: int, composite: Obj | None = None, cluster_name: str = "east") -> str:
    """The composition key of a LocalModelNamespaceCache: its attempt and a digest of its URI."""
    spec = read_cache(ModelCache.model_validate(composite or cache()))
    return f"localcache-{attempt}-{uri_revision(spec)}-{cluster_name}"


def call(
    composite: Obj, *, clusters: list[Obj], replicas: list[Obj], observed: Obj | None = None
) -> Obj:
    req = request(
        composite,
        observed=observed or {},
        required={CLUSTERS: clusters, REPLICAS: replicas},
    )
    req.context.fields[CONTEXT_NOW].CopyFrom(Value(string_value=NOW))
    return as_dict(run(FunctionRunner(), req))


def conditions(rsp: Obj) -> dict[str, tuple[str, str, str]]:
    return {
        c["type"]: (
            c["status"].removeprefix("STATUS_CONDITION_"),
            c["reason"],
            c.get("message", ""),
        )
        for c in rsp.get("conditions", [])
    }


def manifests(rsp: Obj) -> dict[str, Obj]:
    return {
        key: value["resource"]["spec"]["forProvider"]["manifest"]
        for key, value in rsp.get("desired", {}).get("resources", {}).items()
    }


def clusters_status(rsp: Obj) -> list[Obj]:
    return rsp["desired"]["composite"]["resource"]["status"]["clusters"]


def observed_object(rsp: Obj, key: str, status: Obj) -> Obj:
    """A composed Object as Crossplane would observe it, its manifest read back with `status`."""
    obj = dict(rsp["desired"]["resources"][key]["resource"])
    manifest = {**obj["spec"]["forProvider"]["manifest"], "status": status}
    obj["status"] = {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}],
        "atProvider": {"manifest": manifest},
    }
    return obj


KSERVE = {"storageClassName": "cephfs", "nodeGroup": "h100-nvme"}
