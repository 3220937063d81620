"""Names every side of the traffic path agrees on.

A replica's route on its cluster, the cluster's Gateway, a hub's entry Gateway
and a ModelService's backends are composed by four different functions; these
constants and helpers are how they find each other.
"""

import re
from typing import Final

from modelplane.core import naming

# Where the Gateways live on a workload cluster (and, on the control plane, where an
# InferenceGateway puts its Objects when its hub names no kubeconfig Secret).
SYSTEM_NAMESPACE: Final = "modelplane-system"
# The Gateway an InferenceCluster with spec.gateway composes on itself, which
# every replica's HTTPRoute on that cluster attaches to.
CLUSTER_GATEWAY_NAME: Final = "modelplane-replicas"
# An InferenceGateway's Gateway on its hub cluster is `modelplane-entry-<name>`:
# never the cluster Gateway's name, whatever the InferenceGateway is called.
ENTRY_GATEWAY_PREFIX: Final = "modelplane-entry"
HTTP_LISTENER: Final = "http"
SUBDOMAINS_LISTENER: Final = "http-subdomains"
HTTP_PORT: Final = 80
HTTPS_PORT: Final = 443
GATEWAY_GROUP: Final = "gateway.networking.k8s.io"
INFERENCE_GROUP: Final = "inference.networking.k8s.io"
# The header a hub route sets on a request it sends to a replica through the
# replica's cluster Gateway: the replica's route prefix, which the replica's path
# route matches, for a replica whose cluster has not composed its hub route yet
# (`hub_hostname` is what reaches it once it has).
ROUTE_HEADER: Final = "x-modelplane-route"
# Generation may stream for minutes: a gateway's default request timeout (Envoy's
# is 15 seconds) would cut it, so routes disable it, as KServe's own do.
NO_TIMEOUT: Final = "0s"

_DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def object_name(readable: str, *identity: str) -> str:
    """A Service, route or pool name: `readable` when it is a DNS-1035 label (what a
    Service name must be), else a stable hash of `identity` behind a readable head."""
    if len(readable) <= naming.DNS_LABEL_MAX and _DNS_1035.match(readable):
        return readable
    head = readable.replace(".", "-")
    if not head[:1].isalpha():
        head = f"mp-{head}"
    return naming.hashed_name(head, *identity)


def hub_hostname(prefix: str) -> str:
    """The hostname hub traffic for the replica whose route prefix is `prefix`
    (`/<namespace>/<replica>`) carries on its cluster's Gateway.

    A hub route rewrites each request's hostname to it per backend, and only that
    replica's hub HTTPRoute lists it: Gateway API ranks a Route's matching hostname
    above every path match, so a hub request reaches its own replica whatever path
    it carries. Under `.internal`, reserved for private use and never resolved
    publicly: it is only ever a Host header."""
    return f"{naming.digest(prefix)}.hub.modelplane.internal"


def entry_gateway_name(gateway: str) -> str:
    """The Gateway an InferenceGateway named `gateway` composes on its hub cluster."""
    return object_name(f"{ENTRY_GATEWAY_PREFIX}-{gateway}", ENTRY_GATEWAY_PREFIX, gateway)
