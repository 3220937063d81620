"""Gateway API HTTPRoute (v1): serving once every Gateway it names has accepted it and
resolved its backends.

A route has no top-level conditions: each parent Gateway's controller reports
`Accepted` and `ResolvedRefs` under `status.parents`, so `serving` and `readiness`
read those, each for the route's current generation (Gateway API writes
`observedGeneration` on each parent's condition). `Accepted` alone says the route
is attached, not that it reaches anything: an implementation that cannot route to
a backend kind accepts the route and refuses the backend with `ResolvedRefs=False`
(Envoy Gateway without Envoy AI Gateway: reason `InvalidKind` for an
InferencePool), and requests then get no backend.
"""

from collections.abc import Mapping
from typing import Any, Final

from modelplane.core.observed import conditions_of_status

from .base import as_list, mapping
from .service import ObjectKind

ACCEPTED: Final = "Accepted"
RESOLVED_REFS: Final = "ResolvedRefs"
# What each parent must report True, in the order a failure is named.
ROUTE_CONDITIONS: Final = (ACCEPTED, RESOLVED_REFS)
# The controller the render simulation answers for; a real cluster names its implementation.
SIMULATED_CONTROLLER: Final = "modelplane.ai/simulated-gateway-controller"


class HTTPRoute(ObjectKind):
    kind = "HTTPRoute"
    api_version = "gateway.networking.k8s.io/v1"
    serving_condition = ACCEPTED

    def readiness(self) -> dict[str, Any]:
        # A condition the Gateway wrote for an older spec of the route says nothing
        # about this one (`serving`); without the generation on either side, as written.
        current = (
            "(!has(c.observedGeneration) || !has(object.metadata) || "
            "!has(object.metadata.generation) || "
            "c.observedGeneration >= object.metadata.generation)"
        )
        wanted = " && ".join(
            f"p.conditions.exists(c, c.type == '{t}' && c.status == 'True' && {current})"
            for t in ROUTE_CONDITIONS
        )
        query = (
            "has(object.status) && has(object.status.parents) && "
            "size(object.status.parents) > 0 && object.status.parents.all(p, "
            f"has(p.conditions) && {wanted})"
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
        generation = mapping(observed.get("metadata")).get("generation")
        for parent in parents:
            gateway = mapping(parent.get("parentRef")).get("name", "")
            said = conditions_of_status(parent)
            for wanted in ROUTE_CONDITIONS:
                got = next((c for c in said if c.type == wanted), None)
                if (
                    got is not None
                    and got.status == "True"
                    and isinstance(generation, int)
                    and got.observedGeneration is not None
                    and got.observedGeneration < generation
                ):
                    return False, (
                        f"{label} is {wanted} at Gateway {gateway} for an older spec "
                        f"(generation {got.observedGeneration}, not {generation})"
                    )
                if got is None or got.status != "True":
                    why = (got.message or got.reason if got else None) or "pending"
                    return False, _NOT[wanted].format(label=label, gateway=gateway, why=why)
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


# What a parent's condition that is not True says.
_NOT: Final = {
    ACCEPTED: "{label} is not accepted by Gateway {gateway}: {why}",
    RESOLVED_REFS: "{label} has backends Gateway {gateway} does not resolve: {why}",
}

HTTP_ROUTE: Final = HTTPRoute()
