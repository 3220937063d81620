"""Which GitOps sync applied an object, read from what the sync tool writes on it.

A sync with pruning deletes what it applied before and its repository no longer
holds, and nothing else: Argo CD prunes the objects it tracks as its Application's,
Flux the objects in its Kustomization's inventory. A control plane shared by
several teams' repositories holds every team's composites, so one team's
preview must prune only what its own sync applied.

Each tool marks what it applies:
- Argo CD's annotation tracking (the default from Argo CD 3.0) writes
  `argocd.argoproj.io/tracking-id: <application>:<group>/<kind>:<namespace>/<name>`;
  its label tracking (the default before 3.0) writes the Application's name in
  `app.kubernetes.io/instance`, which the annotation wins over when both are there
  (the `annotation+label` method). An object annotated
  `argocd.argoproj.io/sync-options` with `Prune=false` is never pruned.
- Flux's kustomize-controller labels what it applies with its Kustomization's
  `kustomize.toolkit.fluxcd.io/name` and `kustomize.toolkit.fluxcd.io/namespace`;
  an object annotated `kustomize.toolkit.fluxcd.io/prune: disabled` is never pruned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from modelplane_cli.render.objects import View, metadata

ARGO_TRACKING_ID: Final = "argocd.argoproj.io/tracking-id"
ARGO_INSTANCE: Final = "app.kubernetes.io/instance"
ARGO_SYNC_OPTIONS: Final = "argocd.argoproj.io/sync-options"
FLUX_NAME: Final = "kustomize.toolkit.fluxcd.io/name"
FLUX_NAMESPACE: Final = "kustomize.toolkit.fluxcd.io/namespace"
FLUX_PRUNE: Final = "kustomize.toolkit.fluxcd.io/prune"


@dataclass(frozen=True, order=True)
class Owner:
    """The sync that applied an object: its tool's word for it, and its name."""

    tool: str
    name: str

    def __str__(self) -> str:
        return f"{self.tool} {self.name}"


def owner(obj: View, *, instance_label: bool = True) -> Owner | None:
    """The sync that marked `obj` as applied by it, if any. `instance_label`: whether
    Argo CD's label tracking counts; Helm and the Kubernetes recommended labels write
    the same `app.kubernetes.io/instance`, so alone it says less than the others."""
    meta = metadata(obj)
    annotations = _strings(meta.get("annotations"))
    labels = _strings(meta.get("labels"))
    tracking = annotations.get(ARGO_TRACKING_ID, "")
    application, colon, _ = tracking.partition(":")
    if colon and application:
        return Owner("Argo CD Application", application)
    flux = labels.get(FLUX_NAME)
    if flux:
        namespace = labels.get(FLUX_NAMESPACE, "")
        return Owner("Flux Kustomization", f"{namespace}/{flux}" if namespace else flux)
    instance = labels.get(ARGO_INSTANCE) if instance_label else None
    if instance:
        return Owner("Argo CD Application", instance)
    return None


def applied_by(world: View, source: View) -> Owner | None:
    """The sync that applied `source`, read off its copy in the running world: a label
    or annotation the source carries itself, with the same value, is the repository's
    own, not a tool's mark, and is left out before the marks are read."""
    own = metadata(source)
    have = metadata(world)
    kept: dict[str, Any] = {}
    for field in ("labels", "annotations"):
        mine = _strings(own.get(field))
        kept[field] = {k: v for k, v in _strings(have.get(field)).items() if mine.get(k) != v}
    return owner({"metadata": kept})


def prune_disabled(obj: View) -> bool:
    """Whether the sync tool is told never to prune `obj`."""
    annotations = _strings(metadata(obj).get("annotations"))
    if annotations.get(FLUX_PRUNE) == "disabled":
        return True
    options = annotations.get(ARGO_SYNC_OPTIONS, "")
    return "Prune=false" in (option.strip() for option in options.split(","))


def _strings(value: Any) -> Mapping[str, str]:
    """A labels or annotations map; an unreadable one (admission names it) reads empty."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


# What a sync tool writes on every object it applies, beside the repository's text.
_LABELS: Final = (ARGO_INSTANCE, FLUX_NAME, FLUX_NAMESPACE)
_ANNOTATIONS: Final = (ARGO_TRACKING_ID,)


def keep_marks(observed: View, applied: dict[str, Any]) -> None:
    """Put the sync tool's marks on the world's object back on `applied`, a source
    applied over it, where the source leaves them out: the tool writes them again on
    every apply, so they are no change a sync makes."""
    have = metadata(observed)
    meta = applied.setdefault("metadata", {})
    for field, keys in (("labels", _LABELS), ("annotations", _ANNOTATIONS)):
        marks = {k: v for k, v in _strings(have.get(field)).items() if k in keys}
        if not marks:
            continue
        written = meta.get(field)
        if written is None:
            written = meta[field] = {}
        if isinstance(written, dict):
            for key, value in marks.items():
                written.setdefault(key, value)
