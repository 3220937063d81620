"""Gateway API HTTPRoute (v1): serving once every Gateway it names has accepted it.

A route has no top-level conditions: each parent Gateway's controller reports
`Accepted` under `status.parents`, so `serving` and `readiness` read those.
"""

from collections.abc import Mapping
from typing import Any, Final

from modelplane.core.observed import conditions_of_status

from .base import as_list, mapping
from .service import ObjectKind

ACCEPTED: Final = "Accepted"
RESOLVED_REFS: Final = "ResolvedRefs"
# The controller the render simulation answers for; a real cluster names its implementation.
SIMULATED_CONTROLLER: Final = "modelplane.ai/simulated-gateway-controller"


class HTTPRoute(ObjectKind):
    kind = "HTTPRoute"
    api_version = "gateway.networking.k8s.io/v1"
    serving_condition = ACCEPTED

    def readiness(self) -> dict[str, Any]:
        query = (
            "has(object.status) && has(object.status.parents) && "
            "size(object.status.parents) > 0 && object.status.parents.all(p, "
            "has(p.conditions) && p.conditions.exists(c, c.type == 'Accepted' && "
            "c.status == 'True'))"
        )
        return {"policy": "DeriveFromCelQuery", "celQuery": query}

    def serving(self, observed: Mapping[str, Any] | None) -> tuple[bool, str]:
        if not observed:
            return False, f"{self.kind} has not been observed yet"
        label = f"{self.kind} {mapping(observed.get('metadata')).get('name', '')}".strip()
        found = mapping(observed.get("status")).get("parents")
        parents = [mapping(p) for p in as_list(found)]
        if not parents:
            return False, f"{label} has not been accepted by a Gateway yet"
        for parent in parents:
            gateway = mapping(parent.get("parentRef")).get("name", "")
            accepted = next((c for c in conditions_of_status(parent) if c.type == ACCEPTED), None)
            if accepted is None or accepted.status != "True":
                why = (accepted.message or accepted.reason if accepted else None) or "pending"
                return False, f"{label} is not accepted by Gateway {gateway}: {why}"
        return True, f"{label} is {ACCEPTED}"

    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        found = spec.get("parentRefs")
        refs = [mapping(r) for r in as_list(found)]
        return {
            "parents": [
                {
                    "parentRef": dict(ref),
                    "controllerName": SIMULATED_CONTROLLER,
                    "conditions": [
                        {"type": ACCEPTED, "status": "True", "reason": ACCEPTED},
                        {"type": RESOLVED_REFS, "status": "True", "reason": RESOLVED_REFS},
                    ],
                }
                for ref in refs
            ]
        }


HTTP_ROUTE: Final = HTTPRoute()
