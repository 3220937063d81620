"""Reading Kubernetes-style status conditions from plain objects.

Objects arrive from YAML a user may have edited and from protobuf Structs, so a
status, a conditions list or an entry can be missing or of the wrong type; each
reads as "no such condition" rather than an exception.
"""

from collections.abc import Mapping
from typing import Any, cast


def find_condition(obj: Mapping[str, Any] | None, type_: str) -> Mapping[str, Any] | None:
    """The object's condition of `type_`, or None."""
    status = (obj or {}).get("status")
    entries = (
        cast(Mapping[str, Any], status).get("conditions") if isinstance(status, Mapping) else None
    )
    for entry in cast(list[Any], entries) if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and cast(Mapping[str, Any], entry).get("type") == type_:
            return cast(Mapping[str, Any], entry)
    return None


def condition_is(obj: Mapping[str, Any] | None, type_: str, status: str) -> bool:
    """Whether the object reports condition `type_` with `status` ("True", "False", "Unknown")."""
    found = find_condition(obj, type_)
    return found is not None and found.get("status") == status
