"""What an Observe-only provider-kubernetes Object says about the object it reads.

provider-kubernetes GETs the object and, when it exists, reports it back under
`status.atProvider.manifest` and marks the Object Ready (its readiness policy is
SuccessfulCreate) and Synced. When the object does not exist, crossplane-runtime
leaves the Object `Synced=False` with `observe failed: external resource does
not exist`; when its kind is not served at all (a scheduler not installed, so no
Queue kind), the GET fails with `no matches for kind`. Anything else (the cluster
unreachable, a permission missing) says nothing about the object: unknown, which
never keeps a replica away.
"""

from collections.abc import Mapping
from enum import Enum
from typing import Any, Final

from modelplane.core.observed import conditions, first_condition

ABSENT_MESSAGES: Final = ("external resource does not exist", "no matches for kind", "not found")


class Seen(Enum):
    PRESENT = "Present"
    ABSENT = "Absent"
    UNKNOWN = "Unknown"


def seen(observed: Mapping[str, Any] | None) -> tuple[Seen, str]:
    """Whether the observed Object found its object, and the provider's words on it."""
    if observed is None:
        return Seen.UNKNOWN, "not observed yet"
    # The conditions read once: reading them validates every entry.
    found = conditions(observed)
    synced = first_condition(found, "Synced")
    ready = first_condition(found, "Ready")
    if (
        synced is not None
        and synced.status == "True"
        and ready is not None
        and ready.status == "True"
    ):
        return Seen.PRESENT, ""
    message = (synced.message or "") if synced is not None else ""
    if synced is not None and synced.status == "False":
        if any(words in message for words in ABSENT_MESSAGES):
            return Seen.ABSENT, message
        return Seen.UNKNOWN, message or "cannot be observed"
    return Seen.UNKNOWN, message or "not observed yet"
