"""The condition a function sets on its composite: one shape for the scheduler, which
decides it, and the Crossplane glue (`xfn.report`), which sets it.

Crossplane's condition (crossplane-runtime `apis/common/v1/condition.go`) also has
a last transition time and an observed generation; Crossplane stamps both when it
applies what the function returned, so a function says only these four.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Condition:
    """A condition's type, its status (None: Unknown), its reason (a `Reason`) and message."""

    type: str
    status: bool | None
    reason: str
    message: str = ""
