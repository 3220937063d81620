"""The summary's traffic section: each ModelService's address and backends.

One table of services (their gateway, address and whether the route is
accepted), then one table per service of the backends its route sends to, with
each backend's share of the traffic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modelplane.core.observed import find_condition
from modelplane.core.vocabulary import MODEL_SERVICE, ConditionType
from modelplane.traffic.weights import SCALE
from modelplane_cli.render.world import ObjectKey, View

Table = Callable[[Sequence[str], Sequence[Sequence[str]]], str]


def services(composites: Sequence[View], table: Table) -> str:
    """The SERVICES section, empty when no ModelService was rendered."""
    found = [obj for obj in composites if obj.get("kind") == MODEL_SERVICE]
    if not found:
        return ""
    rows = [
        [
            f"{key.namespace}/{key.name}",
            str(((obj.get("spec") or {}).get("gatewayRef") or {}).get("name", "-")),
            str((obj.get("status") or {}).get("address") or "-"),
            _routed(obj),
        ]
        for obj in found
        for key in [ObjectKey.of(obj)]
    ]
    sections = ["SERVICES\n" + table(["SERVICE", "GATEWAY", "ADDRESS", "ROUTED"], rows)]
    sections.extend(_backends(obj, table) for obj in found)
    return "\n\n".join(s for s in sections if s)


def _routed(obj: View) -> str:
    condition = find_condition(obj, ConditionType.ROUTED)
    if condition is None:
        return "-"
    reason = condition.reason
    return f"{condition.status}" + (f" ({reason})" if reason else "")


def _backends(obj: View, table: Table) -> str:
    entries: list[Mapping[str, Any]] = [
        e for e in (obj.get("status") or {}).get("endpoints") or [] if isinstance(e, Mapping)
    ]
    if not entries:
        return ""
    rows = [
        [
            "external" if e.get("external") else str(e.get("deployment", "-")),
            str(e.get("replica", "-")),
            str(e.get("cluster", "-")),
            _share(e.get("weight")),
            str(e.get("url", "-")),
        ]
        for e in entries
    ]
    heading = f"BACKENDS  {ObjectKey.of(obj)}"
    return f"{heading}\n" + table(["DEPLOYMENT", "REPLICA", "CLUSTER", "SHARE", "URL"], rows)


def _share(weight: object) -> str:
    if not isinstance(weight, int) or isinstance(weight, bool):
        return "-"
    return f"{weight * 100 / SCALE:g}%"
