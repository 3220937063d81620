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

`MAX_TEMPLATE_BYTES` bounds a template to what a pod needs (design/template-size.md);
`template_issues` checks both of a template's bounds, its size and its pod spec's
depth (`nesting`), and then the entries its pod spec may not repeat (`pod_keys`),
where a ModelDeployment's and a ModelReplica's roles are read.
"""

import json
from collections.abc import Mapping
from typing import Any, Final

from modelplane.core.issues import Issue
from modelplane.core.nesting import pod_spec_depth_issue
from modelplane.core.pod_keys import key_issues

MAX_TEMPLATE_BYTES: Final = 32 * 1024
"""A role's pod template, as compact JSON (any key order), in bytes. An engine's template with its
arguments, environment, probes and volumes is a few KiB; configuration larger than
this belongs in a ConfigMap the template mounts. At this bound another team's
deployment request reaches 128 MiB only with about 4,000 replicas placed in the
fleet (one copy each), and an InferenceCluster's, which reads three copies of a
single-node replica's template and five of a multi-node one's (the replica, its
workload Object's manifest and that manifest read back), with about 1,300 or 800
replicas on that one cluster: scales the platform's quotas govern."""


def template_bytes(template: object) -> int:
    """The size of `template` as compact JSON: the same whatever order its maps arrived
    in (a map's entries take the same bytes in any order, so none is sorted)."""
    text = json.dumps(template, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode())


def template_issues(template: Mapping[str, Any], path: str) -> list[Issue]:
    """What is wrong with the pod template at `path`: its pod spec nested too deep,
    the template too large, an entry of its pod spec repeated (`pod_keys`). Checked
    before any replica carries it."""
    found = [
        pod_spec_depth_issue(template.get("spec"), f"{path}.spec"),
        template_size_issue(template, path),
    ]
    bounded = [issue for issue in found if issue is not None]
    # Within its bounds only: the walk then costs at most a 32 KiB template's.
    return bounded or key_issues(template.get("spec"), f"{path}.spec")


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
