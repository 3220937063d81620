"""One role of a placed replica, as a ModelReplica's `spec.<role>` records it.

The fleet scheduler places a role on a pool and writes what it decided into the
ModelReplica (`as_dict`); it reads the same fields back from a replica that
already exists, and the renderer reads them back to build the role's pods. One
record serves all three, so a field the scheduler records is read the same way
wherever it is read (`PlacedRole.read`). The role's pod template is not here: it
is the deployment's, which the glue copies into the ModelReplica beside these
fields, and only the renderer reads it.
"""

from dataclasses import dataclass

from modelplane_models.model_replica import ClaimResolution, ReplicaRole

from modelplane.core.devices import ClaimRequest, Constraint, Resolution, claimed_constraints
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.node_taints import NodeTaint, tolerations
from modelplane.core.topology import RoleSize, Topology


@dataclass(frozen=True, slots=True)
class PlacedRole(RoleSize):
    """Where one role of a replica runs and what it claims there; `role` is
    `workers`, or `decode` or `prefill`."""

    role: str
    pool: str
    workers: int
    topology: Topology
    device_requests: tuple[ClaimRequest, ...]
    tolerations: tuple[NodeTaint, ...] = ()
    """The taints of the pool's nodes the role's pods tolerate: its class's nodeTaints
    (a placed role always claims devices there; a Synthetic-only match is rejected)."""
    constraints: tuple[Constraint, ...] = ()
    """The role's DRA constraints; written on the requests it claims (`claimed_constraints`)."""

    def as_dict(self) -> dict[str, object]:
        """The role's scheduler-owned ModelReplica fields (the glue adds the template)."""
        fields: dict[str, object] = {
            "count": self.workers,
            "topology": self.topology.as_dict(),
            "nodePoolName": self.pool,
            "deviceRequests": [request.as_dict() for request in self.device_requests],
        }
        if self.tolerations:
            fields["tolerations"] = tolerations(self.tolerations)
        claimed = claimed_constraints(
            self.constraints, {request.name for request in self.device_requests}
        )
        if claimed:
            fields["constraints"] = [constraint.as_dict() for constraint in claimed]
        return fields

    @classmethod
    def read(cls, role: str, model: ReplicaRole, issues: list[Issue]) -> "PlacedRole":
        """The role `spec.<role>` records, each problem with its topology added to
        `issues` (a default topology then). What else a reader requires of the
        fields (the renderer's DNS names, say) it checks itself."""
        try:
            topology = Topology.read(model.topology, f"spec.{role}.topology")
        except InvalidInputError as invalid:
            issues.extend(invalid.issues)
            topology = Topology()
        return cls(
            role=role,
            pool=model.nodePoolName,
            workers=1 if model.count is None else model.count,
            topology=topology,
            device_requests=tuple(
                ClaimRequest(
                    name=request.name,
                    device_class_name=request.deviceClassName,
                    count=request.count,
                    selectors=tuple(selector.cel for selector in request.selectors or ()),
                    resolved=_resolution(request.resolved),
                )
                for request in model.deviceRequests or ()
            ),
            tolerations=tuple(
                NodeTaint.tolerated_by(t.key, str(t.operator), t.value, str(t.effect))
                for t in model.tolerations or ()
            ),
            constraints=tuple(
                Constraint(
                    tuple(name.root for name in constraint.requests), constraint.matchAttribute
                )
                for constraint in model.constraints or ()
            ),
        )


def _resolution(model: ClaimResolution | None) -> Resolution | None:
    if model is None:
        return None
    return Resolution(model.hardware, tuple(name.root for name in model.devices))
