"""How deeply a team's pod spec may nest, and the check of it.

A pod spec's containers keep fields the XRD does not know
(x-kubernetes-preserve-unknown-fields), so the API server admits one nested
arbitrarily deep. Crossplane, in Go, passes it on; but every copy of it is read
again by a Python function, whose protobuf parser (upb) stops at a nesting depth
of 100 messages, and a JSON object costs three of those (Struct, map entry,
Value), a list two. The deepest copy is the pod spec inside a LeaderWorkerSet
inside a provider-kubernetes Object inside a fetched list: 24 messages down
before the spec's first level. So a spec of 26 levels makes that list
unreadable to every function that fetches it (the InferenceCluster's, for every
team on the cluster), while its own ModelDeployment still reads it.

`MAX_POD_SPEC_DEPTH` bounds it well below that: see design/deep-templates.md.
"""

from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from modelplane.core.issues import Issue

MAX_POD_SPEC_DEPTH: Final = 16
"""Levels of objects and lists in a pod spec, the spec itself the first. The deepest
field of a Kubernetes PodSpec,
`volumes[].projected.sources[].clusterTrustBundle.labelSelector.matchExpressions[].values`,
is 11; 16 leaves room for fields to come, and keeps the deepest copy of the spec
(24 + 3 * 16 = 72 messages) 28 messages under upb's 100."""


def deeper_than(value: object, limit: int) -> str | None:
    """The path, relative to `value` (`.key`, `[index]`), of the first object or list
    that sits more than `limit` levels deep, `value` itself being level 1; None when
    none does. First in document order with keys sorted, so the same value names the
    same path whatever order its maps arrived in. Iterative: the value may be deeper
    than Python's recursion limit."""
    # Every compose checks a template: the walk keeps only levels, and the path of the
    # first part too deep is worked out only once there is one (`_first_deeper`).
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        children: Iterable[object]
        if isinstance(node, Mapping):
            children = cast(Mapping[str, object], node).values()
        elif isinstance(node, list):
            children = cast(list[object], node)
        else:
            continue
        if level > limit:
            return _first_deeper(value, limit)
        stack.extend((child, level + 1) for child in children)
    return None


def _first_deeper(value: object, limit: int) -> str:
    """The path of the first object or list deeper than `limit`, in document order with
    keys sorted; `value` holds one (`deeper_than` found it)."""
    stack: list[tuple[object, str, int]] = [(value, "", 1)]
    while stack:
        node, path, level = stack.pop()
        if isinstance(node, Mapping):
            fields = cast(Mapping[str, Any], node)
            children = [(f"{path}.{key}", fields[key]) for key in sorted(fields, key=str)]
        elif isinstance(node, list):
            children = [(f"{path}[{i}]", item) for i, item in enumerate(cast(list[Any], node))]
        else:
            continue
        if level > limit:
            return path
        stack.extend((child, where, level + 1) for where, child in reversed(children))
    return ""


def pod_spec_depth_issue(spec: object, path: str) -> Issue | None:
    """An issue naming the first part of the pod spec at `path` that nests deeper than
    `MAX_POD_SPEC_DEPTH`, or None."""
    found = deeper_than(spec, MAX_POD_SPEC_DEPTH)
    if found is None:
        return None
    return Issue(
        f"{path}{found}",
        f"nests deeper than {MAX_POD_SPEC_DEPTH} levels of objects and lists, counting "
        f"{path} as the first: the most a pod spec may have, so that every workload built "
        "from it stays readable to the functions that read it back",
    )
