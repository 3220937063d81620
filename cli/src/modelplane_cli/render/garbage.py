"""Garbage collection of what a composite no longer desires, as Crossplane v2.3 does it.

`DeletingComposedResourceGarbageCollector` (`internal/controller/apiextensions/
composite/composition_functions.go`) runs after the pipeline and before anything
is applied: each observed resource missing from the desired state loses its
composed-resource labels and is deleted (foreground). The first delete that
fails ends it; the only refusal a render models is a Usage's (`protection`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from modelplane.core.vocabulary import LABEL_COMPOSITE
from modelplane_cli.render.protection import is_usage, refusal, usages_of
from modelplane_cli.render.world import Obj, ObjectKey, View, World, labels_of, metadata
from modelplane_cli.schema.errors import go_quote

ERR_GARBAGE_COLLECT = "cannot garbage collect composed resources that are no longer desired"
# The labels Crossplane's garbage collector removes before a delete (xcrd's
# LabelKeyNamePrefixForComposed, LabelKeyClaimName, LabelKeyClaimNamespace).
_COMPOSED_LABELS = frozenset(
    {LABEL_COMPOSITE, "crossplane.io/claim-name", "crossplane.io/claim-namespace"}
)


def collect(world: World, observed: Mapping[str, View], desired: Collection[str]) -> str | None:
    """Delete what is observed but no longer desired; the first refused delete's error.

    Crossplane ranges over a Go map here, so its order differs from one reconcile
    to the next and a refused delete is retried in another order. The engine
    takes one order every run could take, and the one that lets the most through:
    what no Usage protects first (a Usage leaving lifts its protection only after
    this pass), then the rest, each by name.
    """
    gone = [name for name in observed if name not in desired]
    protected = {name for name in gone if usages_of(world, ObjectKey.of(observed[name]))}
    leaving: list[View] = []
    for name in sorted(gone, key=lambda n: (n in protected, n)):
        key = ObjectKey.of(observed[name])
        current = world.get(key)
        if current is None:
            continue
        # Crossplane strips the composed-resource labels before deleting, so what
        # survives a refused delete no longer says which composite made it.
        stripped = _without_composed_labels(current)
        world.put(stripped)
        usages = usages_of(world, key, leaving)
        if usages:
            return (
                f"{ERR_GARBAGE_COLLECT}: cannot delete composed resource {go_quote(name)} "
                f"(a {key.kind} named {key.name}): {refusal(usages)}"
            )
        if is_usage(key):
            leaving.append(stripped)
        world.delete_cascade(key)
    return None


def _without_composed_labels(obj: View) -> Obj:
    meta: Obj = dict(metadata(obj))
    labels = {k: v for k, v in labels_of(obj).items() if k not in _COMPOSED_LABELS}
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    return {**obj, "metadata": meta}
