"""How a hub Gateway reaches one backend of a ModelService.

Every backend is a Service (or Envoy Gateway Backend) in the ModelService's tenant
namespace on the hub cluster, so the hub's HTTPRoute refers only to its own
namespace (a cross-namespace backend would need a ReferenceGrant) and every object
validates against core Kubernetes, the Gateway API CRDs or Envoy Gateway's:

- **A replica behind its cluster's Gateway**: an `ExternalName` Service naming
  the Gateway's host (a selectorless Service and an EndpointSlice when the
  Gateway reports an IP address, which ExternalName cannot hold; on a hub served
  by Envoy Gateway, which does not route to ExternalName Services, an Envoy
  Gateway `Backend` with the host as its `fqdn` endpoint instead), and on the
  backendRef a `URLRewrite` of the hostname to the one only the replica's hub
  HTTPRoute lists (`names.hub_hostname`), which outranks every other replica's
  path there, and a `RequestHeaderModifier` setting `x-modelplane-route` to the
  replica's route prefix, which its path route matches for a cluster that has not
  composed the hub route yet. The request keeps its `/v1/...` path: a per-backend
  path rewrite is implementation-specific in Gateway API and refused by common
  implementations, a hostname rewrite and a header are not.
- **A replica on the hub cluster without a Gateway**: its own Service, when it is
  in the same tenant namespace (a Native replica's Service; KServe's workload
  Service speaks TLS, which a plain backend cannot).
- **An external model**: an `ExternalName` Service (or Service and EndpointSlice;
  or, on Envoy Gateway, a `Backend`) for its host, with a backendRef `URLRewrite`
  of the hostname so the provider sees its own name.

An `https` URL is never sent in cleartext. On Envoy Gateway its `Backend` carries
the TLS settings (`spec.tls`: the host as SNI, verified against the system CAs);
elsewhere a Gateway API `BackendTLSPolicy` for the ExternalName Service says the
same, and the backend gets no traffic until that policy's Object is ready
(`Backend.requires`), since a route programmed before its policy would send the
first requests in plaintext. An `https` URL at an IP address has no hostname to
verify a certificate against: it gets no traffic at all (`Backend.held`).
"""

from dataclasses import dataclass, field
from typing import Any, Final

from modelplane.core import naming
from modelplane.core.kinds import SERVICE
from modelplane.core.vocabulary import CLUSTER_DOMAIN, LABEL_MANAGED_BY, MANAGED_BY

from .names import GATEWAY_GROUP, ROUTE_HEADER, hub_hostname, object_name
from .urls import URL

CLUSTER_DOMAIN_SUFFIX: Final = f".{CLUSTER_DOMAIN}"
SERVICE_PORT_NAME: Final = "http"
LABEL_SERVICE_NAME: Final = "kubernetes.io/service-name"
ENVOY_GATEWAY_GROUP: Final = "gateway.envoyproxy.io"
ENVOY_BACKEND_KIND: Final = "Backend"
ENVOY_KEY_SUFFIX: Final = "envoy"
TLS_KEY_SUFFIX: Final = "tls"
BACKEND_TLS_POLICY_KIND: Final = "BackendTLSPolicy"
# Gateway API's and Envoy Gateway's name for the platform's trust store.
SYSTEM_CAS: Final = "System"


@dataclass(frozen=True)
class Backend:
    """One backendRef of a hub route and the objects it needs on the hub cluster.

    `key` names it among the ModelService's composed resources; `objects` are
    (key, manifest) pairs to create in the route's namespace; `status` is its entry
    in the ModelService's `status.endpoints` (weight added later). A backend whose
    objects are composed but which must get no traffic says why in `held`; one that
    may get traffic only once the object under key `requires` is ready names it."""

    key: str
    ref: dict[str, Any] = field(hash=False)
    objects: tuple[tuple[str, dict[str, Any]], ...] = field(hash=False)
    status: dict[str, Any] = field(hash=False)
    held: str | None = None
    requires: str | None = None


def _meta(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": dict(sorted(labels.items()))}


def _services(
    key: str, name: str, namespace: str, url: URL, labels: dict[str, str], envoy: bool
) -> tuple[tuple[str, dict[str, Any]], ...]:
    """What the route's backendRef names for `url`'s host and port: for a DNS name an
    Envoy Gateway Backend (`envoy`) or an ExternalName Service; for an IP address, a
    selectorless Service and the EndpointSlice that gives it the address."""
    port = {"name": SERVICE_PORT_NAME, "port": url.port, "protocol": "TCP"}
    tls = url.scheme == "https"
    if not url.ip and envoy:
        spec: dict[str, Any] = {"endpoints": [{"fqdn": {"hostname": url.host, "port": url.port}}]}
        if tls:
            spec["tls"] = {"sni": url.host, "wellKnownCACertificates": SYSTEM_CAS}
        backend = {
            "apiVersion": f"{ENVOY_GATEWAY_GROUP}/v1alpha1",
            "kind": ENVOY_BACKEND_KIND,
            "metadata": _meta(name, namespace, labels),
            "spec": spec,
        }
        # Its own key, so a hub that turns out to be Envoy Gateway's deletes the
        # ExternalName Service's Object and creates this one, rather than changing
        # the kind of an Object's manifest in place, which would leave the Service.
        return ((f"{key}-{ENVOY_KEY_SUFFIX}", backend),)
    if not url.ip:
        service = {
            "apiVersion": SERVICE.api_version,
            "kind": SERVICE.kind,
            "metadata": _meta(name, namespace, labels),
            "spec": {"type": "ExternalName", "externalName": url.host, "ports": [port]},
        }
        if tls:
            return ((key, service), (tls_key(key), _tls_policy(name, namespace, url, labels)))
        return ((key, service),)
    service = {
        "apiVersion": SERVICE.api_version,
        "kind": SERVICE.kind,
        "metadata": _meta(name, namespace, labels),
        "spec": {"type": "ClusterIP", "ports": [{**port, "targetPort": url.port}]},
    }
    slice_labels = {**labels, LABEL_SERVICE_NAME: name}
    endpoints = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": _meta(name, namespace, slice_labels),
        "addressType": "IPv6" if url.ipv6 else "IPv4",
        "endpoints": [{"addresses": [url.host]}],
        "ports": [port],
    }
    return ((key, service), (f"{key}-endpoints", endpoints))


def tls_key(key: str) -> str:
    """The key of the BackendTLSPolicy of the backend under `key`."""
    return f"{key}-{TLS_KEY_SUFFIX}"


def _tls_policy(name: str, namespace: str, url: URL, labels: dict[str, str]) -> dict[str, Any]:
    """TLS to `url`'s host for the ExternalName Service `name`: the host as SNI and as
    the name its certificate must carry, verified against the system CAs."""
    return {
        "apiVersion": f"{GATEWAY_GROUP}/v1",
        "kind": BACKEND_TLS_POLICY_KIND,
        "metadata": _meta(name, namespace, labels),
        "spec": {
            "targetRefs": [{"group": "", "kind": SERVICE.kind, "name": name}],
            "validation": {"hostname": url.host, "wellKnownCACertificates": SYSTEM_CAS},
        },
    }


def _guarded(
    key: str,
    ref: dict[str, Any],
    objects: tuple[tuple[str, dict[str, Any]], ...],
    status: dict[str, Any],
    url: URL,
) -> Backend:
    """The backend, held from traffic while TLS to an `https` URL is not in place."""
    keys = {k for k, _ in objects}
    if url.scheme != "https":
        return Backend(key, ref, objects, status)
    if url.ip:
        why = f"{url} is an IP address: no hostname to verify its certificate against"
        return Backend(key, ref, objects, status, held=why)
    requires = tls_key(key) if tls_key(key) in keys else None
    return Backend(key, ref, objects, status, requires=requires)


def _ref(
    name: str, port: int, filters: list[dict[str, Any]], backend: bool = False
) -> dict[str, Any]:
    """A backendRef to a Service, or to an Envoy Gateway Backend (whose endpoint holds
    the port, so the ref names none)."""
    ref: dict[str, Any] = (
        {"group": ENVOY_GATEWAY_GROUP, "kind": ENVOY_BACKEND_KIND, "name": name}
        if backend
        else {"group": "", "kind": SERVICE.kind, "name": name, "port": port}
    )
    if filters:
        ref["filters"] = filters
    return ref


def in_cluster_service(url: URL) -> tuple[str, str] | None:
    """(Service, namespace) when `url` names a Service inside its cluster, else None."""
    if not url.host.endswith(CLUSTER_DOMAIN_SUFFIX):
        return None
    parts = url.host.removesuffix(CLUSTER_DOMAIN_SUFFIX).split(".")
    return (parts[0], parts[1]) if len(parts) == 2 else None


def replica_backend(
    service: str,
    namespace: str,
    *,
    deployment: str,
    replica: str,
    cluster: str,
    url: URL,
    hub_cluster: str,
    envoy: bool = False,
) -> Backend | str:
    """The backend for one serving replica, or why the hub cannot reach it."""
    status = {"deployment": deployment, "replica": replica, "cluster": cluster, "url": str(url)}
    labels = {LABEL_MANAGED_BY: MANAGED_BY}
    key = f"backend-{replica}"
    local = in_cluster_service(url)
    if local is not None:
        target, target_namespace = local
        if cluster != hub_cluster:
            return (
                f"its cluster {cluster} declares no gateway, so only its own cluster reaches "
                f"{url}; declare spec.gateway on InferenceCluster {cluster}"
            )
        if url.scheme != "http" or target_namespace != namespace:
            return f"{url} is not a plain HTTP Service in namespace {namespace} of the hub cluster"
        return Backend(key, _ref(target, url.port, []), (), status)
    name = object_name(f"{service}-{replica}", namespace, service, replica)
    filters: list[dict[str, Any]] = []
    prefix = url.path.rstrip("/")
    if prefix:
        # The hostname only this replica's hub route lists (`hub_hostname`); the header
        # for a replica whose cluster has not composed that route yet.
        filters.append({"type": "URLRewrite", "urlRewrite": {"hostname": hub_hostname(prefix)}})
        filters.append(
            {
                "type": "RequestHeaderModifier",
                "requestHeaderModifier": {"set": [{"name": ROUTE_HEADER, "value": prefix}]},
            }
        )
    objects = _services(key, name, namespace, url, labels, envoy)
    ref = _ref(name, url.port, filters, envoy and not url.ip)
    return _guarded(key, ref, objects, status, url)


def external_backend(service: str, namespace: str, url: URL, envoy: bool = False) -> Backend:
    """The backend for a model served elsewhere, at its base URL."""
    digest = naming.digest(str(url), length=8)
    key = f"backend-external-{digest}"
    name = object_name(f"{service}-external-{digest}", namespace, service, str(url))
    filters = [{"type": "URLRewrite", "urlRewrite": {"hostname": url.host}}] if not url.ip else []
    labels = {LABEL_MANAGED_BY: MANAGED_BY}
    status = {"external": True, "url": str(url)}
    objects = _services(key, name, namespace, url, labels, envoy)
    ref = _ref(name, url.port, filters, envoy and not url.ip)
    return _guarded(key, ref, objects, status, url)
