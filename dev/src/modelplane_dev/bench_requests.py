"""The requests `bench call` and `bench fleet` send: the first call's (the whole fleet
fetched), the steady one after it (its replicas composed and serving), and the change
a live fleet makes between two polls."""

from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from modelplane.core.vocabulary import API_VERSION, MODEL_DEPLOYMENT

_NAMESPACE = "bench"
# compose-model-deployment's requirement names.
CLUSTERS = "inferenceclusters"
REPLICAS = "modelreplicas"


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def deployment(selectors: list[str], replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_DEPLOYMENT,
        "metadata": {"name": "bench", "namespace": _NAMESPACE, "uid": "bench-uid"},
        "spec": {
            "replicas": replicas,
            "nodeSelector": {
                "devices": [
                    {"name": "gpu", "count": 1, "selectors": [{"cel": s} for s in selectors]}
                ]
            },
            "workers": {"template": {"spec": {"containers": [{"name": "engine", "image": "b"}]}}},
        },
    }


def _served(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as the API server returns it: with a uid and a resourceVersion."""
    metadata = obj["metadata"]
    uid = f"uid-{metadata.get('namespace', '')}-{metadata['name']}"
    return {**obj, "metadata": {**metadata, "uid": uid, "resourceVersion": "1"}}


def first_request(
    clusters: list[dict[str, Any]], selectors: list[str], replicas: int
) -> fnv1.RunFunctionRequest:
    """The call after Crossplane has fetched what the function asked for: the whole
    fleet, no ModelReplicas yet, no PriorityClasses."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "bench"
    req.observed.composite.resource.CopyFrom(_struct(deployment(selectors, replicas)))
    fetched = req.required_resources.get_or_create(CLUSTERS)
    for obj in clusters:
        fetched.items.add().resource.CopyFrom(_struct(_served(obj)))
    req.required_resources.get_or_create(REPLICAS)
    req.required_resources.get_or_create("priorityclasses")
    return req


SERVING = {
    "conditions": [
        {"type": kind, "status": "True", "reason": "Bench"}
        for kind in ("Ready", "Synced", "Accepted", "Serving")
    ]
}
LOADING = {
    "conditions": [
        *({"type": kind, "status": "True", "reason": "Bench"} for kind in ("Synced", "Accepted")),
        *({"type": kind, "status": "False", "reason": "Bench"} for kind in ("Ready", "Serving")),
    ]
}
"""A replica placed and accepted whose model is still loading."""


def steady_request(
    first: fnv1.RunFunctionRequest, response: fnv1.RunFunctionResponse
) -> fnv1.RunFunctionRequest:
    """The next reconcile: what the first call composed now exists and serves, and the
    deployment carries the status the first call published."""
    req = fnv1.RunFunctionRequest()
    req.CopyFrom(first)
    status = response.desired.composite.resource.fields.get("status")
    if status is not None:
        req.observed.composite.resource.fields["status"].CopyFrom(status)
    fetched = req.required_resources[REPLICAS]
    for name, desired in sorted(response.desired.resources.items()):
        obj = _struct({})
        obj.CopyFrom(desired.resource)
        metadata = obj.get_or_create_struct("metadata")
        metadata["namespace"] = _NAMESPACE
        metadata["uid"] = f"uid-{name}"
        metadata["resourceVersion"] = "1"
        obj["status"] = SERVING
        req.observed.resources[name].resource.CopyFrom(obj)
        fetched.items.add().resource.CopyFrom(obj)
    return req


def grow_pool(request: fnv1.RunFunctionRequest, call: int, name: str = "inferenceclusters") -> None:
    """One cluster's first pool grown by a node, declared and published: what a live
    fleet changes between two polls. A different cluster each call, spread over the fleet."""
    items = request.required_resources[name].items
    if not items:
        return
    fields = items[(call * 7919) % len(items)].resource.fields
    metadata = fields["metadata"].struct_value.fields
    metadata["resourceVersion"].string_value = str(
        int(metadata["resourceVersion"].string_value) + 1
    )
    spec, status = fields["spec"].struct_value.fields, fields["status"].struct_value.fields
    spec["nodePools"].list_value.values[0].struct_value.fields["nodeCount"].number_value += 1
    status["gpuPools"].list_value.values[0].struct_value.fields["nodes"].number_value += 1
