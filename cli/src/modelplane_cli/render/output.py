"""`-o yaml` and `-o json`: every object of the final world, then the last round's events.

Both are sorted by apiVersion, kind, namespace and name, with sorted keys, so the
same input always gives the same bytes. JSON is a `v1 List` (what `kubectl get -o
json` prints), YAML a multi-document stream; `modelplane render` reads both back.
"""

from __future__ import annotations

import json

from modelplane_cli import yamlio
from modelplane_cli.render.result import RenderResult
from modelplane_cli.render.world import Obj, ObjectKey


def documents(result: RenderResult) -> list[Obj]:
    return sorted([*result.objects, *result.events], key=ObjectKey.of)


def to_yaml(result: RenderResult) -> str:
    docs = documents(result)
    return yamlio.dump_all(docs) if docs else ""


def to_json(result: RenderResult) -> str:
    listing = {"apiVersion": "v1", "kind": "List", "items": documents(result)}
    return json.dumps(listing, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
