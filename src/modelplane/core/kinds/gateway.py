"""Gateway API Gateway (v1): serving once Programmed, reached at the address it reports.

The render simulation gives a healthy Gateway a hostname address derived from
its name, namespace and cluster, under the `.example` domain reserved for
documentation, so that every simulated gateway has its own address and no
real one is ever named.
"""

from collections.abc import Mapping
from typing import Any, Final

from modelplane_models.gateway import Gateway as GatewayModel

from modelplane.core.observed import status_only

from .base import as_list, mapping
from .service import PodlessKind

PROGRAMMED: Final = "Programmed"
SIMULATED_DOMAIN: Final = "example"


class Gateway(PodlessKind):
    """Programmed is among the Gateway's own conditions: the registry's default
    readiness query and status reader apply."""

    kind = "Gateway"
    api_version = "gateway.networking.k8s.io/v1"
    serving_condition = PROGRAMMED

    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return self._status(spec, [])

    def healthy_status_on(self, manifest: Mapping[str, Any], cluster: str) -> dict[str, Any]:
        metadata = mapping(manifest.get("metadata"))
        parts = [metadata.get("name"), metadata.get("namespace"), cluster or None]
        labels = [str(p) for p in parts if isinstance(p, str) and p]
        address = ".".join([*labels, SIMULATED_DOMAIN])
        return self._status(mapping(manifest.get("spec")), [address])

    def _status(self, spec: Mapping[str, Any], addresses: list[str]) -> dict[str, Any]:
        found = spec.get("listeners")
        listeners = [mapping(x) for x in as_list(found)]
        status: dict[str, Any] = {
            "conditions": [
                {"type": "Accepted", "status": "True", "reason": "Accepted"},
                {"type": PROGRAMMED, "status": "True", "reason": PROGRAMMED},
            ],
            "listeners": [
                {
                    "name": listener.get("name", ""),
                    "attachedRoutes": 0,
                    "supportedKinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
                    "conditions": [
                        {"type": "Accepted", "status": "True", "reason": "Accepted"},
                        {"type": PROGRAMMED, "status": "True", "reason": PROGRAMMED},
                    ],
                }
                for listener in listeners
            ],
        }
        if addresses:
            status["addresses"] = [{"type": "Hostname", "value": a} for a in addresses]
        return status


def address(observed: Mapping[str, Any] | None) -> str | None:
    """The first address an observed Gateway reports, or None."""
    read = status_only(observed, GatewayModel) if observed else None
    found = read.status.addresses if read is not None and read.status is not None else None
    return next((entry.value for entry in found or [] if entry.value), None)


GATEWAY: Final = Gateway()
