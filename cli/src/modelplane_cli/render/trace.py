"""`--trace DEPLOYMENT`: every cluster of every row of a ModelDeployment's match trace.

In status a row standing for several clusters lists only the first few by name
(`clusterNames`) and at most 50 rows are kept, so a 10,000-cluster fleet's status
stays small. A render is not bound by etcd's object limit: for the deployments
named here it asks the function for the whole trace (the request context key
`CONTEXT_MATCH_TRACE`, which Crossplane never sets), and prints it ungrouped
again, one line per cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modelplane.core.vocabulary import MODEL_DEPLOYMENT
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.inputs import normalize_scope
from modelplane_cli.render.loader import Document
from modelplane_cli.render.world import Obj, ObjectKey, View

Table = Callable[[Sequence[str], Sequence[Sequence[str]]], str]


class TraceError(Exception):
    """A `--trace` name that names no ModelDeployment of the input, or several."""


def resolve(names: Sequence[str], documents: Sequence[Document], apis: Apis) -> list[str]:
    """Each name (`NAME` or `NAMESPACE/NAME`) as the `namespace/name` of the one
    ModelDeployment of the input it names, in the order given."""
    known = sorted(
        {
            f"{key.namespace}/{key.name}"
            for doc in documents
            if not doc.deleted and doc.key.kind == MODEL_DEPLOYMENT
            for key in [ObjectKey.of(normalize_scope(doc.obj, apis))]
        }
    )
    resolved: list[str] = []
    problems: list[str] = []
    for name in names:
        found = [k for k in known if k == name] if "/" in name else _named(known, name)
        if len(found) == 1:
            resolved.append(found[0])
        elif not found:
            problems.append(f"--trace {name}: no ModelDeployment of that name in the input")
        else:
            problems.append(
                f"--trace {name}: several ModelDeployments of that name ({', '.join(found)}); "
                "give NAMESPACE/NAME"
            )
    if problems:
        raise TraceError("\n".join(problems))
    return list(dict.fromkeys(resolved))


def _named(known: Sequence[str], name: str) -> list[str]:
    return [k for k in known if k.split("/", 1)[1] == name]


def every_cluster(objects: Sequence[Obj], traced: Sequence[str], table: Table) -> str:
    """For each traced deployment, its match trace with one line per cluster."""
    by_name = {
        f"{key.namespace}/{key.name}": obj
        for obj in objects
        if obj.get("kind") == MODEL_DEPLOYMENT
        for key in [ObjectKey.of(obj)]
    }
    sections: list[str] = []
    for name in traced:
        deployment = by_name.get(name)
        heading = f"MATCH TRACE, EVERY CLUSTER  {MODEL_DEPLOYMENT} {name}"
        if deployment is None:
            sections.append(f"{heading}\n(deleted by the render)")
            continue
        # Back in the scheduler's order: by cluster, its own rejection before its pools'.
        rows = sorted(
            (row for entry in _entries(deployment) for row in _rows(entry)),
            key=lambda row: (row[0], row[1] != "-", row[1], row[2]),
        )
        if not rows:
            sections.append(f"{heading}\n(no cluster or pool rejected)")
            continue
        body = table(["CLUSTER", "POOL", "ROLE", "REASON", "MESSAGE"], rows)
        sections.append(f"{heading}\n{body}")
    return "\n\n".join(sections)


def _entries(deployment: View) -> list[Mapping[str, Any]]:
    trace = (deployment.get("status") or {}).get("matchTrace") or []
    return [entry for entry in trace if isinstance(entry, Mapping)]


def _rows(entry: Mapping[str, Any]) -> list[list[str]]:
    names = entry.get("clusterNames") or [entry.get("cluster", "")]
    rest = [str(entry.get(field) or "-") for field in ("pool", "role", "reason", "message")]
    return [[str(name), *rest] for name in names]
