"""Gateway API Gateways: each InferenceCluster's own, and an InferenceGateway's entry.

Both listen for HTTP on port 80 and take routes only from tenant namespaces
(the namespaces Modelplane composes on a workload cluster carry
`modelplane.ai/namespace`), so a route in any other namespace of the cluster
cannot attach to them.
"""

from collections.abc import Mapping
from typing import Any

from modelplane.core.kinds import GATEWAY
from modelplane.core.kinds.base import mapping
from modelplane.core.refs import ObjectRef
from modelplane.core.vocabulary import LABEL_MANAGED_BY, LABEL_TENANT_NAMESPACE, MANAGED_BY
from modelplane.stack.components import ENVOY_GATEWAY_CONTROLLER

from .names import GATEWAY_GROUP, HTTP_LISTENER, HTTP_PORT, SUBDOMAINS_LISTENER, SYSTEM_NAMESPACE


def _listener(name: str, hostname: str | None) -> dict[str, Any]:
    listener: dict[str, Any] = {"name": name, "protocol": "HTTP", "port": HTTP_PORT}
    if hostname:
        listener["hostname"] = hostname
    listener["allowedRoutes"] = {
        "kinds": [{"group": GATEWAY_GROUP, "kind": "HTTPRoute"}],
        "namespaces": {
            "from": "Selector",
            "selector": {
                "matchExpressions": [{"key": LABEL_TENANT_NAMESPACE, "operator": "Exists"}]
            },
        },
    }
    return listener


def gateway(name: str, class_name: str, hostname: str | None = None) -> dict[str, Any]:
    """A Gateway in the system namespace. With a hostname it listens for the name and
    its subdomains (two listeners: a wildcard matches only subdomains)."""
    listeners = [_listener(HTTP_LISTENER, hostname)]
    if hostname:
        listeners.append(_listener(SUBDOMAINS_LISTENER, f"*.{hostname}"))
    return {
        "apiVersion": GATEWAY.api_version,
        "kind": GATEWAY.kind,
        "metadata": {
            "name": name,
            "namespace": SYSTEM_NAMESPACE,
            "labels": {LABEL_MANAGED_BY: MANAGED_BY},
        },
        "spec": {"gatewayClassName": class_name, "listeners": listeners},
    }


def system_namespace() -> dict[str, Any]:
    """The namespace the Gateways live in on a workload cluster."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": SYSTEM_NAMESPACE, "labels": {LABEL_MANAGED_BY: MANAGED_BY}},
    }


def address_url(address: str) -> str:
    """The http URL of a Gateway address (a hostname, or an IP address)."""
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}"


def gateway_class(name: str) -> ObjectRef:
    """The GatewayClass `name`, as an Observe-only Object reads it."""
    return ObjectRef(f"{GATEWAY_GROUP}/v1", "GatewayClass", name)


def class_controller(observed: Mapping[str, Any]) -> str | None:
    """`spec.controllerName` of a GatewayClass as read back; None when not read."""
    controller = mapping(observed.get("spec")).get("controllerName")
    return controller if isinstance(controller, str) and controller else None


def envoy_backends(controller: str | None) -> bool:
    """Whether routes on a class served by `controller` reach DNS-named backends through
    Envoy Gateway Backends: Envoy Gateway does not route to ExternalName Services (it
    finds no endpoints for one up to v1.8 and refuses it from v1.9; envoyproxy/gateway
    #5817, #9190). Any other, or unknown, controller gets ExternalName Services."""
    return controller == ENVOY_GATEWAY_CONTROLLER
