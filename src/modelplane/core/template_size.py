"""How large a team's pod template may be, and the check of it.

A role's pod template is the one part of a ModelDeployment the XRD leaves open
(its containers keep fields the schema does not know), so only etcd's object limit
(about 1.5 MiB) bounds it. Every ModelReplica copies its role's template, and what a
replica carries is read by others: every ModelDeployment that may place on a
cluster fetches that cluster's replicas from every namespace, an unsettled one the
whole fleet's (design/requirements.md), and every InferenceCluster fetches its
replicas and their workloads. One namespace's templates padded to that limit made
another team's deployment request 133 MiB, past the functions' 128 MiB
(`--max-recv-message-size`), so it could no longer place, scale or move.

`MAX_TEMPLATE_BYTES` bounds a template to what a pod needs (design/template-size.md).
"""

import json
from typing import Final

from modelplane.core.issues import Issue

MAX_TEMPLATE_BYTES: Final = 64 * 1024
"""A role's pod template, as compact JSON, in bytes. An engine's template with its
arguments, environment, probes and volumes is a few KiB; configuration larger than
this belongs in a ConfigMap the template mounts. At this bound one namespace needs
about 2,000 replicas placed in the fleet (or 1,000 on one cluster) to fill another
team's 128 MiB request, a scale the platform's quotas govern."""


def template_bytes(template: object) -> int:
    """The size of `template` as compact JSON, keys sorted: the same whatever order its
    maps arrived in."""
    text = json.dumps(template, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return len(text.encode())


def template_size_issue(template: object, path: str) -> Issue | None:
    """An issue naming the template at `path` when it is larger than
    `MAX_TEMPLATE_BYTES`, or None."""
    size = template_bytes(template)
    if size <= MAX_TEMPLATE_BYTES:
        return None
    return Issue(
        path,
        f"is {size} bytes as JSON, more than the {MAX_TEMPLATE_BYTES} a pod template may "
        "have: every replica copies it, and other teams' deployments read the replicas; "
        "put large configuration in a ConfigMap the template mounts",
    )
