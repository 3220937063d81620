"""What an InferenceClass must satisfy beyond its schema.

The generated model checks shapes; this checks meaning that needs real parsers:
every capacity is a Kubernetes quantity, every version attribute is strict
semver (the DRA driver would refuse anything else, and the scheduler could not
compare it), and the class name can label nodes. Each device is read into the
same `DeviceSpec` the scheduler matches against and turned into the CEL device
a selector sees, so a class is valid exactly when the scheduler can use it.
"""

from modelplane_models.inference_class import InferenceClass
from modelplane_models.shapes import Device

from modelplane.core.devices import read_device
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.naming import is_dns_label


def class_issues(obj: InferenceClass) -> list[Issue]:
    """Every problem with an InferenceClass, each naming its field; empty when valid."""
    issues: list[Issue] = []
    name = (obj.metadata.name if obj.metadata else None) or ""
    if not is_dns_label(name):
        issues.append(
            Issue("metadata.name", f"{name!r} must be a DNS label (at most 63 characters)")
        )
    if obj.spec is None:
        issues.append(Issue("spec", "is required"))
    for index, device in enumerate(obj.spec.devices if obj.spec else ()):
        issues.extend(device_issues(device, f"spec.devices[{index}]"))
    return sorted(issues)


def device_issues(device: Device, path: str) -> list[Issue]:
    """What the schema cannot see: quantities and versions that do not parse.

    Attributes and capacities are read in name order, so a device with two bad
    entries names the same one in every process.
    """
    try:
        read_device(device, path)
    except InvalidInputError as invalid:
        return list(invalid.issues)
    return []
