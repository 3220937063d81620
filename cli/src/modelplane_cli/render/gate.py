"""The CI gate's verdict: every reason a render fails, each mistake once, where it was made.

`failures` judges the render by `--fail-on`; a pull request also fails on what a
sync with pruning deletes (`prune`) and on names nothing resolves (`references`).
"""

from __future__ import annotations

from modelplane_cli.render import mistakes, prune, references
from modelplane_cli.render.apis import Apis
from modelplane_cli.render.apiservers import WorkloadApiServers
from modelplane_cli.render.failures import NEVER, failures
from modelplane_cli.render.inputs import normalize_scope
from modelplane_cli.render.loader import Document, Sources
from modelplane_cli.render.result import RenderResult
from modelplane_cli.render.world import ObjectKey


def problems(
    level: str,
    result: RenderResult,
    kinds: list[str],
    sources: Sources,
    servers: WorkloadApiServers,
    pruned: list[prune.Pruned],
    left_behind: frozenset[ObjectKey],
) -> list[str]:
    """Every reason the render fails at `level`, each mistake once, where it was made."""
    located = mistakes.locate(result.rejected_manifests, result.objects, servers, sources)
    found = failures(result, level, kinds, located)
    if level == NEVER:
        return found
    found.extend(p.message() for p in pruned)
    # What the sync deletes is no target, though the render's world still holds it.
    dangling = references.unresolved_by_object(result.objects, sources, absent=left_behind)
    # A composite naming what does not exist is that one mistake: what its
    # conditions say follows from it.
    broken = tuple(f"{key}: " for key, _ in dangling)
    if broken:
        found = [p for p in found if not p.startswith(broken)]
    found.extend(line for _, line in dangling)
    return found


def pruned(
    candidates: list[prune.Pruned], result: RenderResult, *, allow: bool
) -> tuple[list[str], list[prune.Pruned]]:
    """The notes of the deletions `--allow-prune` accepts, and the prunes that fail the
    render. A deletion a Usage refused that no Usage holds after the render succeeds
    later (`prune.replayed`); any other refused deletion fails the sync, whether or not
    it was intended."""
    settled = prune.replayed(candidates, result.objects)
    if not allow:
        return [], settled
    notes = [p.message(accepted=True) for p in settled if p.refused is None]
    return notes, [p for p in settled if p.refused is not None]


def sources(documents: list[Document], apis: Apis) -> Sources:
    """Where each object was read (its desired source first), for messages."""
    found: dict[ObjectKey, Document] = {}
    for doc in sorted(documents, key=lambda d: d.observed):
        found.setdefault(ObjectKey.of(normalize_scope(doc.obj, apis)), doc)
    return Sources(found)
