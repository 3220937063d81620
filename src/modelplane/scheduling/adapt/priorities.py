"""The control plane's PriorityClasses as the scheduler reads them: values by name, and
which may not preempt."""

from collections.abc import Iterable, Mapping
from typing import Any, cast

from modelplane.scheduling.model import Priorities


def _name(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata")
    name = cast(Mapping[str, Any], metadata).get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) and name else None


def read_priorities(objects: Iterable[Mapping[str, Any]]) -> Priorities:
    """Every PriorityClass's value, the value of the one marked `globalDefault`, and
    those whose `preemptionPolicy` is `Never`.

    `scheduling.k8s.io/v1` PriorityClass objects, as plain dicts (the API server has
    validated them; one without a name or an integer value is passed over). Should
    several claim `globalDefault`, which the API server refuses, the first by name wins.
    """
    values: dict[str, int] = {}
    defaults: list[tuple[str, int]] = []
    never: set[str] = set()
    for obj in objects:
        name = _name(obj)
        value = obj.get("value")
        if name is None or not isinstance(value, int) or isinstance(value, bool):
            continue
        values[name] = value
        if obj.get("preemptionPolicy") == "Never":
            never.add(name)
        if obj.get("globalDefault") is True:
            defaults.append((name, value))
    default = min(defaults)[1] if defaults else 0
    return Priorities(dict(sorted(values.items())), default, frozenset(never))
