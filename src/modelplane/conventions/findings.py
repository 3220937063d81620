"""What the conventions report instead of raising."""

from dataclasses import dataclass
from typing import Literal

Severity = Literal["Warning", "Error"]
WARNING: Severity = "Warning"
ERROR: Severity = "Error"


@dataclass(frozen=True)
class Finding:
    """One problem with a scheduling block or with the conventions applied to a workload.

    An Error means the workload must not be (re)rendered with the offending
    input: the caller keeps whatever it composed before. A Warning is reported
    on the owner's conditions and events, and rendering goes ahead.
    """

    severity: Severity
    reason: str
    field: str
    message: str


def has_errors(findings: "list[Finding] | tuple[Finding, ...]") -> bool:
    return any(f.severity == ERROR for f in findings)


def dedupe(findings: list[Finding]) -> list[Finding]:
    """Drop repeats, keeping the first occurrence's position."""
    seen: set[Finding] = set()
    out: list[Finding] = []
    for finding in findings:
        if finding not in seen:
            seen.add(finding)
            out.append(finding)
    return out
