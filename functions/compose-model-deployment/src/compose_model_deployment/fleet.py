"""What a deployment asks Crossplane for: the part of the fleet its decision reads.

A deployment can only place on the InferenceClusters its clusterSelector admits,
and only the replicas on those clusters take capacity it could use. So:

- the clusters are listed by the labels the selector implies (`matchLabels`, and
  each `In` of one value) where it implies any, since Crossplane lists by
  `matchLabels` only; by name where it names one through the implicit label
  `modelplane.ai/cluster` (no cluster object carries it); else every cluster. What
  is fetched is a superset of what the selector admits; the scheduler still
  applies the whole selector.
- a cluster one of this deployment's replicas runs on that the list missed (its
  labels or the selector changed) is fetched by name, with the replicas on it: it
  still exists, so its replicas move make-before-break instead of being dropped
  as on a deleted cluster.
- the ModelReplicas are listed per fetched cluster by the label the scheduler
  writes on each (`modelplane.ai/cluster`), in every namespace: exactly the
  replicas that take capacity on those clusters, as fresh as a list of the whole
  fleet (design/requirements.md says why no published summary replaces them).
  With every cluster fetched, or more than `MAX_REPLICA_LISTS` listed, every
  replica is, in one list.

The per-cluster lists depend on the clusters fetched, so a reconcile's fetch loop
takes one more call; the requirements are the same on every call once the clusters
are fetched, so it settles.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models import InferenceCluster, ModelReplica
from modelplane_models.shapes import LabelSelector as LabelSelectorModel

from compose_model_deployment.health import unreachable_cluster_names
from compose_model_deployment.kept import Kept
from compose_model_deployment.replicas import serving_replicas
from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.vocabulary import API_VERSION, INFERENCE_CLUSTER, LABEL_CLUSTER, MODEL_REPLICA
from modelplane.scheduling.adapt.deployment import label_selector
from modelplane.scheduling.label_selector import compile_label_selector
from modelplane.xfn import required
from modelplane.xfn.required import Required, State

CLUSTERS = "inferenceclusters"
REPLICAS = "modelreplicas"
# Requirement names of a cluster fetched by name, and of the replicas on a cluster.
CLUSTER_NAMED = "inferenceclusters/"
REPLICAS_ON = "modelreplicas/"
# Each list is a List Crossplane makes, and a List by label reads every object of the
# kind (controller-runtime's CacheReader.List filters labels after listing them all):
# past this many clusters one list of every replica costs Crossplane less.
MAX_REPLICA_LISTS = 256
M = TypeVar("M")
# What is kept of a fetched list (`Kept.of_list`).
UNREACHABLE = "unreachable"
SERVING = "serving"


@dataclass(frozen=True)
class Selection:
    """How the clusters are listed: by `labels`, by `name`, or (neither) all of them."""

    labels: dict[str, str] | None = None
    name: str | None = None

    @property
    def narrowed(self) -> bool:
        return self.labels is not None or self.name is not None


EVERY_CLUSTER = Selection()


def cluster_selection(composite: dict[str, Any]) -> Selection:
    """The narrowest list that holds every cluster the composite's clusterSelector
    admits. Only the selector is read, so an error elsewhere in the spec does not
    change what is asked for; every cluster when it implies no label or cannot be
    read (the scheduler then refuses it, naming the field)."""
    spec = composite.get("spec")
    raw = cast(dict[str, Any], spec).get("clusterSelector") if isinstance(spec, dict) else None
    if raw is None:
        return EVERY_CLUSTER
    try:
        selector = parse_object(LabelSelectorModel, raw)
        implied = compile_label_selector(label_selector(selector)).implied_labels()
    except InvalidInputError:
        return EVERY_CLUSTER
    if LABEL_CLUSTER in implied:
        # Every cluster's implicit label, valued its name: a Get.
        return Selection(name=implied[LABEL_CLUSTER])
    return Selection(labels=implied) if implied else EVERY_CLUSTER


def own_clusters(observed: dict[str, dict[str, Any]]) -> set[str]:
    """The clusters this deployment's composed replicas record (`spec.clusterName`),
    read leniently: a replica that cannot be read is refused later, naming it."""
    names = {recorded_cluster(obj) for obj in observed.values() if obj.get("kind") == MODEL_REPLICA}
    return {name for name in names if name}


def recorded_cluster(replica: dict[str, Any]) -> str | None:
    """The cluster an observed ModelReplica records (`spec.clusterName`), read
    leniently; None when it names none."""
    spec = replica.get("spec")
    name = cast(dict[str, Any], spec).get("clusterName") if isinstance(spec, dict) else None
    return name if isinstance(name, str) and name else None


@dataclass(frozen=True)
class Fleet:
    """The fleet as fetched: the clusters (with those whose `Reachable` is False) and
    the replicas on them (with those `Serving`). Unresolved until every list is in."""

    clusters: Required[InferenceCluster]
    replicas: Required[ModelReplica]
    unreachable: frozenset[str] = frozenset()
    serving: frozenset[tuple[str, str]] = frozenset()


def require_fleet(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    composite: dict[str, Any],
    observed: dict[str, dict[str, Any]],
    kept: Kept,
) -> Fleet:
    """Ask for the fleet this deployment's decision reads, and what of it has come."""
    selection = cluster_selection(composite)
    if not selection.narrowed:
        required.require_all(rsp, CLUSTERS, API_VERSION, INFERENCE_CLUSTER)
        required.require_all(rsp, REPLICAS, API_VERSION, MODEL_REPLICA)
        clusters = required.resolve(req, CLUSTERS, InferenceCluster)
        replicas = required.resolve(req, REPLICAS, ModelReplica)
        return Fleet(
            clusters,
            replicas,
            kept.of_list(UNREACHABLE, clusters, unreachable_cluster_names),
            kept.of_list(SERVING, replicas, serving_replicas),
        )
    if selection.name is not None:
        required.require_named(rsp, CLUSTERS, API_VERSION, INFERENCE_CLUSTER, selection.name)
    else:
        required.require_labelled(
            rsp, CLUSTERS, API_VERSION, INFERENCE_CLUSTER, selection.labels or {}
        )
    listed = required.resolve(req, CLUSTERS, InferenceCluster)
    if not listed.resolved:
        return Fleet(listed, Required(State.UNRESOLVED))
    parts = [(CLUSTERS, listed)]
    missing = own_clusters(observed) - _names(listed)
    for name in sorted(missing):
        key = CLUSTER_NAMED + name
        required.require_named(rsp, key, API_VERSION, INFERENCE_CLUSTER, name)
        parts.append((key, required.resolve(req, key, InferenceCluster)))
    clusters = _merged([found for _, found in parts])
    unreachable = frozenset[str]().union(
        *(
            kept.of_list(UNREACHABLE, found, unreachable_cluster_names)
            for _, found in parts
            if found.resolved
        )
    )
    on = _names(listed) | missing
    if len(on) > MAX_REPLICA_LISTS:
        required.require_all(rsp, REPLICAS, API_VERSION, MODEL_REPLICA)
        replicas = required.resolve(req, REPLICAS, ModelReplica)
        serving = kept.of_list(SERVING, replicas, serving_replicas)
        return Fleet(clusters, replicas, unreachable, serving)
    # The replicas on a missing cluster are asked for with it, not after it is found:
    # one call less, and an empty list if it is gone.
    lists: list[tuple[str, Required[ModelReplica]]] = []
    for name in sorted(on):
        key = REPLICAS_ON + name
        required.require_labelled(rsp, key, API_VERSION, MODEL_REPLICA, {LABEL_CLUSTER: name})
        lists.append((key, required.resolve(req, key, ModelReplica)))
    serving = frozenset[tuple[str, str]]().union(
        *(kept.of_list(SERVING, found, serving_replicas) for _, found in lists if found.resolved)
    )
    return Fleet(clusters, _merged([found for _, found in lists]), unreachable, serving)


def require_own(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    names: frozenset[str],
    kept: Kept,
) -> Fleet:
    """Ask for a settled deployment's own clusters by name and the replicas on each
    (`settled`): the narrow fleet. The same requirement names and selectors as the
    wide path uses for a cluster its list missed, so both may stand in one call."""
    parts: list[Required[InferenceCluster]] = []
    lists: list[Required[ModelReplica]] = []
    for name in sorted(names):
        required.require_named(rsp, CLUSTER_NAMED + name, API_VERSION, INFERENCE_CLUSTER, name)
        required.require_labelled(
            rsp, REPLICAS_ON + name, API_VERSION, MODEL_REPLICA, {LABEL_CLUSTER: name}
        )
        parts.append(required.resolve(req, CLUSTER_NAMED + name, InferenceCluster))
        lists.append(required.resolve(req, REPLICAS_ON + name, ModelReplica))
    unreachable = frozenset[str]().union(
        *(
            kept.of_list(UNREACHABLE, found, unreachable_cluster_names)
            for found in parts
            if found.resolved
        )
    )
    serving = frozenset[tuple[str, str]]().union(
        *(kept.of_list(SERVING, found, serving_replicas) for found in lists if found.resolved)
    )
    return Fleet(_merged(parts), _merged(lists), unreachable, serving)


def _names(clusters: Required[InferenceCluster]) -> set[str]:
    """Every fetched cluster's name, read or not (an unreadable one still exists)."""
    names = {c.metadata.name for c in clusters.items if c.metadata and c.metadata.name}
    return names | {u.name for u in clusters.unreadable if u.named}


def _merged(parts: Sequence[Required[M]]) -> Required[M]:
    """Several fetched lists as one, in the order given; unresolved while any is."""
    if any(not part.resolved for part in parts):
        return Required(State.UNRESOLVED)
    items = [item for part in parts for item in part.items]
    unreadable = [u for part in parts for u in part.unreadable]
    state = State.PRESENT if items or unreadable else State.ABSENT
    return Required(state, items, unreadable, tuple(d for part in parts for d in part.digests))
