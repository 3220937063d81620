"""Usages: what Crossplane's `nousages` webhook refuses to delete, and what it says.

Crossplane v2.3 serves three Usage kinds (`protection.crossplane.io/v1beta1`
Usage and ClusterUsage, and the legacy `apiextensions.crossplane.io/v1beta1`
Usage). Its validating webhook (`internal/webhook/protection/usage/handler.go`,
`failurePolicy: Fail` in `cluster/webhookconfigurations/usage.yaml`) answers the
DELETE of any object a Usage still references with `Allowed: false`, code 409
and the in-use message as the status reason; the API server turns that into a
Conflict whose message names the webhook (apiserver's `webhookerrors.ToStatusErr`).

A Usage that is itself being deleted still exists until the Usage controller
removes its finalizer, which happens after the delete call returns
(`internal/controller/protection/usage/reconciler.go`): so within one garbage
collection pass, deleting a Usage does not yet lift its protection. The engine
passes the Usages deleted so far in the pass as `leaving`; they protect until the
pass ends and are then gone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from modelplane_cli.render.objects import group_of
from modelplane_cli.render.world import ObjectKey, View, World, labels_of
from modelplane_cli.schema.errors import go_quote

# The kinds whose objects protect what their `spec.of` names.
USAGE_TYPES: Final = (
    ("protection.crossplane.io/v1beta1", "Usage"),
    ("protection.crossplane.io/v1beta1", "ClusterUsage"),
    ("apiextensions.crossplane.io/v1beta1", "Usage"),
)
WEBHOOK_NAME: Final = "nousages.protection.crossplane.io"
# The kinds the webhook's index keys with namespace "" and looks up with "" whatever
# the deleted object's namespace: they protect an object of that name in any namespace.
_INDEXED_WITHOUT_NAMESPACE: Final = frozenset(
    {("protection.crossplane.io", "ClusterUsage"), ("apiextensions.crossplane.io", "Usage")}
)
# The Go type names `inUseMessage` prints with %T, by Usage kind and group.
_GO_TYPES: Final = {
    ("protection.crossplane.io", "Usage"): "*v1beta1.Usage",
    ("protection.crossplane.io", "ClusterUsage"): "*v1beta1.ClusterUsage",
    ("apiextensions.crossplane.io", "Usage"): "*v1beta1.Usage",
}


def is_usage(key: ObjectKey) -> bool:
    return (key.api_version, key.kind) in USAGE_TYPES


def usages_of(world: World, target: ObjectKey, leaving: Iterable[View] = ()) -> list[View]:
    """Every Usage (in the world, or deleted this pass) whose `spec.of` is `target`."""
    used = world.get(target)
    if used is None:
        return []
    found: list[View] = []
    seen: set[ObjectKey] = set()
    present = [
        world.get(key)
        for api_version, kind in USAGE_TYPES
        for key in world.select(api_version, kind)
    ]
    for usage in [*present, *leaving]:
        if usage is None or ObjectKey.of(usage) in seen:
            continue
        seen.add(ObjectKey.of(usage))
        if _references(usage, target, used):
            found.append(usage)
    return found


def _references(usage: View, target: ObjectKey, used: View) -> bool:
    of: Mapping[str, Any] = (usage.get("spec") or {}).get("of") or {}
    # The webhook's index (`finder.go` `indexVal`) keys by group, not version.
    if group_of(str(of.get("apiVersion") or "")) != target.group or of.get("kind") != target.kind:
        return False
    usage_key = ObjectKey.of(usage)
    usage_namespace = usage_key.namespace
    ref: Mapping[str, Any] | None = of.get("resourceRef")
    if ref is not None:
        if ref.get("name") != target.name:
            return False
        if (usage_key.group, usage_key.kind) in _INDEXED_WITHOUT_NAMESPACE:
            return True
        # The Usage controller reads `of` in the Usage's namespace unless it names one.
        namespace = str(ref.get("namespace") or usage_namespace)
        return namespace == target.namespace
    selector: Mapping[str, Any] = of.get("resourceSelector") or {}
    namespace = str(selector.get("namespace") or usage_namespace)
    wanted: Mapping[str, str] = selector.get("matchLabels") or {}
    labels = labels_of(used)
    return namespace == target.namespace and all(labels.get(k) == v for k, v in wanted.items())


def refusal(usages: list[View]) -> str:
    """The API server's message for a DELETE the webhook refused (HTTP 409 Conflict)."""
    first = usages[0]
    key = ObjectKey.of(first)
    ident = go_quote(key.name)
    if key.namespace:
        ident = f"{go_quote(key.name)} (in namespace {go_quote(key.namespace)})"
    go_type = _GO_TYPES.get((key.group, key.kind), f"*v1beta1.{key.kind}")
    spec: Mapping[str, Any] = first.get("spec") or {}
    by: Mapping[str, Any] | None = spec.get("by")
    head = f"This resource is in-use by {len(usages)} usage(s), including the {go_type} {ident}"
    if by is not None:
        name = (by.get("resourceRef") or {}).get("name", "")
        detail = f"{head} by resource {by.get('kind')}/{name}."
    elif spec.get("reason"):
        detail = f"{head} with reason: {go_quote(str(spec['reason']))}."
    else:
        detail = f"{head}."
    return f"admission webhook {go_quote(WEBHOOK_NAME)} denied the request: {detail}"
