"""read_constraints: a role's device constraints, each naming only its own requests."""

from modelplane_models.shapes import DeviceConstraint, Request

from modelplane.core.devices import Constraint, read_constraints
from modelplane.core.issues import Issue

PCIE = "resource.kubernetes.io/pcieRoot"


def _constraint(*requests: str) -> DeviceConstraint:
    return DeviceConstraint(matchAttribute=PCIE, requests=[Request(r) for r in requests])


def test_each_constraint_is_its_request_names_and_attribute_in_order() -> None:
    issues: list[Issue] = []
    read = read_constraints(
        [_constraint("gpu", "nic"), _constraint("nic")],
        {"gpu", "nic"},
        "spec.decode",
        lambda name: f"unknown {name}",
        issues,
    )
    assert read == [Constraint(("gpu", "nic"), PCIE), Constraint(("nic",), PCIE)]
    assert issues == []


def test_a_name_that_is_no_request_is_an_issue_at_its_index_worded_by_the_caller() -> None:
    issues: list[Issue] = []
    read = read_constraints(
        [_constraint("gpu"), _constraint("gpu", "nic")],
        {"gpu"},
        "spec.decode",
        lambda name: f"{name!r} is not a request",
        issues,
    )
    # The constraint is still read: the caller reports the issue and holds.
    assert read == [Constraint(("gpu",), PCIE), Constraint(("gpu", "nic"), PCIE)]
    assert [(i.path, i.message) for i in issues] == [
        ("spec.decode.constraints[1].requests[1]", "'nic' is not a request")
    ]


def test_no_constraints_read_as_none() -> None:
    assert read_constraints(None, set(), "spec.workers", str, []) == []
