"""DRA constraints: requests whose devices must share one value of an attribute.

A ModelDeployment's `nodeSelector.constraints[]` is DRA's
`DeviceConstraint`: every device allocated for the named requests must carry
the attribute `matchAttribute` (a fully qualified `domain/name`) with one value,
for example GPUs and a NIC on the same PCIe root
(`resource.kubernetes.io/pcieRoot`). An InferenceClass lists devices that
differ in such an attribute as separate entries (`gpu-root0`, `gpu-root1`), so
the fleet scheduler checks a constraint on the entries each request takes: a
request takes one entry (`matching`), and the entries of a constraint's
requests must all carry the attribute with one value. A request with an
attribute of its own: the constraint holds trivially for one entry.

The check is a predicate the assignment search calls as it extends a partial
assignment (`Aligned.admits`), so a node is rejected only when no aligned
assignment exists, and `explain` says why when none does.

Values match as the DRA allocator's `matchAttributeConstraint` matches them: of
one kind (string, int, bool or version) and equal, so an int 1 and a bool true,
or a version and a string of the same text, are different values.
"""

from collections.abc import Sequence

from modelplane.core.devices import AttributeValue, Constraint, DeviceSpec

Typed = tuple[str, AttributeValue]
"""An attribute's kind and value: what a constraint compares."""


def attribute(device: DeviceSpec, qualified: str) -> Typed | None:
    """The device's kind and value of `qualified` (`domain/name`), None when it has none.
    A bare attribute name lives in the device's driver's domain, as DRA publishes it."""
    for name, kind, value in device.attributes:
        full = name if "/" in name else f"{device.driver}/{name}"
        if full == qualified:
            # With its kind: Python's 1 == True must not make an int match a bool.
            return kind, value
    return None


class Aligned:
    """The constraints of one role, resolved against one node's device entries."""

    def __init__(
        self,
        constraints: Sequence[Constraint],
        request_names: Sequence[str],
        devices: Sequence[DeviceSpec],
    ) -> None:
        index = {name: i for i, name in enumerate(request_names)}
        # Per constraint: the request indices it binds (requests it names that the
        # role has; the deployment adapter refuses any other) and each entry's value.
        self._groups: list[tuple[frozenset[int], list[Typed | None]]] = [
            (
                frozenset(index[name] for name in constraint.requests if name in index),
                [attribute(device, constraint.match_attribute) for device in devices],
            )
            for constraint in constraints
        ]
        self._constraints = tuple(constraints)
        self._devices = tuple(devices)

    def __bool__(self) -> bool:
        return bool(self._groups)

    def admits(self, request: int, kind: int, chosen: Sequence[int]) -> bool:
        """Whether `request` may take entry `kind`, given the entries already `chosen`
        (-1 where not yet): every constraint binding the request needs the entry to
        carry its attribute with the value the constraint's other chosen entries carry."""
        for bound, values in self._groups:
            if request not in bound:
                continue
            value = values[kind]
            if value is None:
                return False
            for other in bound:
                if other != request and chosen[other] >= 0 and values[chosen[other]] != value:
                    return False
        return True

    def explain(self) -> str:
        """Why no assignment satisfied the constraints, for the match trace."""
        parts: list[str] = []
        for constraint, (_, values) in zip(self._constraints, self._groups, strict=True):
            names = ", ".join(repr(n) for n in constraint.requests)
            carried = sorted({str(v[1]) for v in values if v is not None})
            if not carried:
                parts.append(
                    f"no device of the pool has attribute {constraint.match_attribute} "
                    f"(constraint on {names})"
                )
            else:
                parts.append(
                    f"requests {names} need their devices on one {constraint.match_attribute} "
                    f"({', '.join(carried)}), and no value has enough of them on one node"
                )
        return "; ".join(parts)
