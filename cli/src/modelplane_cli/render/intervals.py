"""The intervals a Crossplane v2.3 control plane waits, and where each is decided.

`timeline` prices a render's rounds with these. Every value is the default a
fresh install runs with; jitter (Crossplane's and crossplane-runtime's +/-10%)
is left out, so each is the nominal value.

- **A composite's requeue.** With realtime compositions (a beta feature, on by
  default: `--enable-realtime-compositions`, `cmd/crossplane/core/core.go`) a
  composite is requeued after its pipeline's TTL, the smallest non-zero
  `meta.ttl` its functions returned (`Reconciler.Reconcile`,
  `internal/controller/apiextensions/composite/reconciler.go`: `RequeueAfter:
  jitter(res.TTL)`; the TTL is gathered in `FunctionComposer.Compose`,
  `composition_functions.go`). crossplane-function-sdk-python's `response.to()`
  sets `DEFAULT_TTL`, one minute (`crossplane/function/response.py`), which every
  Modelplane function keeps. Realtime compositions also turn polling off
  (`WithPollInterval(0)`, `internal/controller/apiextensions/definition/reconciler.go`):
  a composite whose pipeline returned no TTL waits for a watch, or for the period
  of its `crossplane.io/poll-interval` annotation. Render prices such a composite
  (only a function other than Modelplane's, or a failed pipeline, has no TTL) as
  requeued after `--poll-interval`, one minute, as with realtime compositions off.
- **What wakes a composite at once.** A change to the composite itself, and (with
  realtime compositions) to any resource its `spec.crossplane.resourceRefs`
  lists: the reconciler starts a watch per referenced kind (`StartWatches` in
  `Reconciler.Reconcile`). Required resources are not watched in v2.3: a
  composite sees their changes on its next requeue.
- **provider-kubernetes** (v1.2.1) polls an up-to-date Object every `--poll`, ten
  minutes by default (`cmd/provider/main.go`); crossplane-runtime's managed
  reconciler requeues after that interval once an external resource is up to
  date, and after an update (`pkg/reconciler/managed/reconciler.go`, v2.0.0-rc.1,
  "External resource is up to date" and "Successfully requested update"), but
  right away after a create ("Successfully requested creation": `Requeue:
  true`). With `--enable-watches` (off by default) an Object that sets
  `spec.watch: true` is re-observed when the object it wraps changes
  (`shouldWatch`, `internal/controller/namespaced/object/object.go`).
- **provider-helm** (v1.4.0) polls every `--poll`, ten minutes by default
  (`cmd/provider/main.go`), and has no watches.
- **Any other provider**: crossplane-runtime's `defaultPollInterval`, one minute
  (`pkg/reconciler/managed/reconciler.go`), unless it passes its own.
"""

from __future__ import annotations

from typing import Final

from modelplane_cli.render.simulate import OBJECT_GROUPS
from modelplane_cli.render.world import View, group_of

MINUTE: Final = 60.0

# crossplane-function-sdk-python 0.15 response.DEFAULT_TTL.
FUNCTION_TTL: Final = 1 * MINUTE
# Crossplane core --poll-interval: what render prices a composite without a TTL at.
COMPOSITE_POLL: Final = 1 * MINUTE
# provider-kubernetes v1.2.1 --poll.
KUBERNETES_POLL: Final = 10 * MINUTE
# provider-helm v1.4.0 --poll.
HELM_POLL: Final = 10 * MINUTE
# crossplane-runtime's managed reconciler default.
MANAGED_POLL: Final = 1 * MINUTE
# A watched change is seen as it happens.
WATCHED: Final = 0.0

_HELM_GROUPS: Final = frozenset({"helm.crossplane.io", "helm.m.crossplane.io"})


def composite_requeue(ttl: float | None) -> float:
    """How long a composite waits before it runs again unprompted."""
    return ttl if ttl else COMPOSITE_POLL


def provider_observes(obj: View, *, watches: bool) -> float:
    """How long a provider takes to see a change in what its managed resource manages.

    `watches` is whether provider-kubernetes runs with `--enable-watches`.
    """
    group = group_of(str(obj.get("apiVersion", "")))
    if group in OBJECT_GROUPS:
        watched = (obj.get("spec") or {}).get("watch") is True
        return WATCHED if watches and watched else KUBERNETES_POLL
    if group in _HELM_GROUPS:
        return HELM_POLL
    return MANAGED_POLL
