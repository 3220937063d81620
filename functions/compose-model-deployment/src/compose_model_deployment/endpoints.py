"""Where each placed replica is reached: `status.endpoints` and one ModelEndpoint per
replica that serves.

A ModelReplica publishes its URL (`status.url`) once it is known: through its
cluster's Gateway when the InferenceCluster declares one, else its Service. The
deployment lists every placed replica's URL with whether it serves, and composes
a ModelEndpoint for each one that does; a replica that stops serving loses its
endpoint in the same reconcile, and every ModelService routing to the
deployment drops it on its next.

A replica on an unreachable cluster is not serving (`fn.emit`), yet may be: the
control plane may have lost only its connection. Its endpoint goes, as Kubernetes
takes a lost node's pods out of a Service's endpoints, while another replica on a
reachable cluster serves; while none does, the endpoints of those that served as
last read stay (`routed`), since dropping them would take the model off its route
altogether, and a request to a cluster that still serves is better than none.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from typing import TYPE_CHECKING, Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.model_deployment import EndpointStatus

from modelplane.core.kinds.base import mapping
from modelplane.core.observed import condition_is
from modelplane.core.vocabulary import (
    API_VERSION,
    LABEL_DEPLOYMENT,
    LABEL_REPLICA,
    MODEL_ENDPOINT,
)
from modelplane.scheduling import Decision
from modelplane.xfn import structs

if TYPE_CHECKING:
    # Only a type here: what the runner keeps reads statuses, which name endpoints.
    from compose_model_deployment.kept import Kept

ENDPOINT_KEY_PREFIX = "endpoint-"


def endpoint_key(replica: str) -> str:
    """The composition resource name of a replica's ModelEndpoint."""
    return f"{ENDPOINT_KEY_PREFIX}{replica}"


def is_endpoint(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == MODEL_ENDPOINT


def replica_url(observed: dict[str, Any] | None) -> str | None:
    """The URL an observed ModelReplica publishes, or None."""
    url = mapping(mapping(observed).get("status")).get("url")
    return url if isinstance(url, str) and url else None


def held_url(endpoint: dict[str, Any] | None) -> str | None:
    """The URL a composed ModelEndpoint routes to, or None."""
    url = mapping(mapping(endpoint).get("spec")).get("url")
    return url if isinstance(url, str) and url else None


def routed(serving_now: dict[str, bool], last_read: dict[str, bool]) -> frozenset[str]:
    """The replicas the deployment's ModelEndpoints route to: those serving now, or, while
    none is (every one that serves is on an unreachable cluster), those that served as
    last read."""
    chosen = serving_now if any(serving_now.values()) else last_read
    return frozenset(name for name, serves in chosen.items() if serves)


def endpoint_status(
    decision: Decision,
    observed: dict[str, dict[str, Any]],
    serving_now: dict[str, bool],
    last_read: dict[str, bool] | None = None,
) -> list[EndpointStatus]:
    """`status.endpoints`: every placed replica whose URL is known, and whether it serves
    (`last_read`: whether it served as last read, when its cluster is unreachable)."""
    held = last_read if last_read is not None else serving_now
    entries: list[EndpointStatus] = []
    for replica in decision.replicas:
        url = replica_url(observed.get(replica.name))
        if url is None and held[replica.name]:
            # A serving replica whose status cannot be read: its endpoint is held
            # (statuses.Statuses.serves), with the URL it was composed with.
            url = held_url(observed.get(endpoint_key(replica.name)))
        if url is not None:
            entries.append(
                EndpointStatus(
                    replica=replica.name,
                    cluster=replica.cluster,
                    url=url,
                    serving=serving_now[replica.name],
                )
            )
    return entries


def compose_endpoints(
    rsp: fnv1.RunFunctionResponse,
    deployment: str,
    entries: list[EndpointStatus],
    observed: dict[str, dict[str, Any]],
    kept: "Kept",
    chosen: frozenset[str] | None = None,
) -> None:
    """A ModelEndpoint for every entry `chosen` routes to (`routed`; by default those
    that serve), ready once Crossplane reports it so (each built once per object,
    `Kept.compose`)."""
    for entry in entries:
        if not (entry.serving if chosen is None else entry.replica in chosen):
            continue
        key = endpoint_key(entry.replica or "")
        body = {
            "apiVersion": API_VERSION,
            "kind": MODEL_ENDPOINT,
            "metadata": {
                "name": entry.replica,
                "labels": {LABEL_DEPLOYMENT: deployment, LABEL_REPLICA: entry.replica},
            },
            "spec": {
                "deploymentName": deployment,
                "replicaName": entry.replica,
                "clusterName": entry.cluster,
                "url": entry.url,
            },
        }
        desired = rsp.desired.resources[key]
        kept.compose(desired, MODEL_ENDPOINT, body, _update)
        ready = condition_is(observed.get(key), "Ready", "True")
        desired.ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE


def _update(desired: fnv1.Resource, body: dict[str, Any]) -> None:
    structs.update(desired.resource, body)
