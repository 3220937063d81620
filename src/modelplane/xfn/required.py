"""Required resources with three states, because "not fetched yet" is not "absent".

The SDK returns an empty list both before Crossplane has resolved a requirement
and after it resolved to nothing. Treating the first as the second would make a
function believe a cluster or class vanished and stop emitting what runs there.
"""

import enum
from dataclasses import dataclass, field
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.structs import to_dict


class State(enum.Enum):
    UNRESOLVED = "Unresolved"
    ABSENT = "Absent"
    PRESENT = "Present"


@dataclass(frozen=True)
class Required:
    state: State
    items: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    @property
    def resolved(self) -> bool:
        return self.state is not State.UNRESOLVED

    def first(self) -> dict[str, Any] | None:
        return self.items[0] if self.items else None


def resolve(req: fnv1.RunFunctionRequest, name: str) -> Required:
    if name not in req.required_resources:
        return Required(State.UNRESOLVED)
    items = [to_dict(item.resource) for item in req.required_resources[name].items]
    return Required(State.PRESENT if items else State.ABSENT, items)


def require_named(
    rsp: fnv1.RunFunctionResponse,
    name: str,
    api_version: str,
    kind: str,
    object_name: str,
    *,
    namespace: str | None = None,
) -> None:
    response.require_resources(
        rsp, name, api_version, kind, match_name=object_name, namespace=namespace
    )


def require_all(
    rsp: fnv1.RunFunctionResponse,
    name: str,
    api_version: str,
    kind: str,
    namespace: str | None = None,
) -> None:
    """Every object of a kind (in one namespace, or cluster-wide when namespace is None)."""
    response.require_resources(rsp, name, api_version, kind, namespace=namespace)
