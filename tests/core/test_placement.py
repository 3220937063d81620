"""PlacedRole: the role the fleet scheduler records in a ModelReplica, read back as written."""

from typing import Any

from modelplane_models.model_replica import ReplicaRole

from modelplane.core.devices import ClaimRequest, Constraint
from modelplane.core.issues import Issue
from modelplane.core.node_taints import NodeTaint
from modelplane.core.placement import PlacedRole
from modelplane.core.topology import Topology

PCIE = "resource.kubernetes.io/pcieRoot"
TEMPLATE = {"spec": {"containers": [{"name": "engine", "image": "vllm"}]}}


def _placed(*constraints: Constraint) -> PlacedRole:
    return PlacedRole(
        role="decode",
        pool="h100",
        workers=3,
        topology=Topology(tensor=4, data=2, data_local=2),
        device_requests=(
            ClaimRequest("gpu", "gpu.nvidia.com", 4, ('device.attributes["x"].y == 1',)),
            ClaimRequest("nic", "nic.example.com", 1, ()),
        ),
        tolerations=(
            NodeTaint("nvidia.com/gpu", "NoSchedule"),
            NodeTaint("pool", "NoExecute", "a"),
        ),
        constraints=constraints,
    )


def _model(fields: dict[str, Any]) -> ReplicaRole:
    # The glue writes the deployment's template beside the scheduler's fields.
    return ReplicaRole.model_validate({**fields, "template": TEMPLATE})


def test_what_the_scheduler_records_reads_back_as_the_same_role() -> None:
    placed = _placed(Constraint(("gpu", "nic"), PCIE))
    issues: list[Issue] = []
    assert PlacedRole.read("decode", _model(placed.as_dict()), issues) == placed
    assert issues == []


def test_a_constraint_is_recorded_on_the_claimed_requests_only() -> None:
    placed = _placed(Constraint(("gpu", "synthetic"), PCIE), Constraint(("synthetic",), PCIE))
    assert placed.as_dict()["constraints"] == [{"requests": ["gpu"], "matchAttribute": PCIE}]
    read = PlacedRole.read("decode", _model(placed.as_dict()), [])
    assert read.constraints == (Constraint(("gpu",), PCIE),)


def test_what_the_api_leaves_out_reads_as_its_default() -> None:
    model = ReplicaRole.model_validate({"nodePoolName": "h100", "template": TEMPLATE})
    read = PlacedRole.read("workers", model, [])
    assert read == PlacedRole("workers", "h100", 1, Topology(), ())
    assert read.pods == 1


def test_a_topology_that_is_not_one_is_an_issue_at_its_field_and_reads_as_the_default() -> None:
    model = _model({"nodePoolName": "h100", "topology": {"data": 4, "dataLocal": 3}})
    issues: list[Issue] = []
    read = PlacedRole.read("prefill", model, issues)
    assert [issue.path for issue in issues] == ["spec.prefill.topology.dataLocal"]
    assert read.topology == Topology()
