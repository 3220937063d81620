"""What an InferenceClass must satisfy beyond its schema.

The schema checks shapes; this checks meaning that needs real parsers: every
capacity is a Kubernetes quantity, every version attribute is strict semver (the
DRA driver would refuse anything else, and the scheduler could not compare it),
and the class name can label nodes.
"""

from dataclasses import dataclass
from typing import Any

from modelplane.cel import device_from_spec
from modelplane.core.naming import is_dns_label


@dataclass(frozen=True, order=True)
class Problem:
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def class_problems(obj: dict[str, Any]) -> list[Problem]:
    """Every problem with an InferenceClass, each naming its field; empty when valid."""
    problems: list[Problem] = []
    name = obj.get("metadata", {}).get("name", "")
    if not is_dns_label(name):
        problems.append(
            Problem("metadata.name", f"{name!r} must be a DNS label (at most 63 characters)")
        )
    devices = obj.get("spec", {}).get("devices", [])
    for index, device in enumerate(devices):
        problems.extend(device_problems(device, f"spec.devices[{index}]"))
    return sorted(problems)


def device_problems(device: dict[str, Any], path: str) -> list[Problem]:
    """What the schema cannot see: quantities and versions that do not parse.

    Names, the device class a DRA device needs and value shapes are the XRD's
    rules, enforced at admission before any function sees the class.
    """
    try:
        device_from_spec(device)
    except ValueError as exc:
        return [Problem(path, str(exc))]
    return []
