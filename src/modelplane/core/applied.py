"""Whether what a cluster runs is what was composed, and whether a verdict is current.

Crossplane writes a composed provider-kubernetes Object as soon as a function
returns it, long before the provider applies its manifest to the workload cluster.
So the Object's own `spec.forProvider.manifest` says what was asked, not what runs:
only the read-back (`status.atProvider.manifest`) says that. Each workload manifest
a replica composes carries a digest of itself (`ANNOTATION_SPEC_DIGEST`), and a
read-back that carries another digest is stale: the change is not applied yet.

The digest covers the whole manifest as composed, not only the replica's revision:
a workload also changes when its cluster's scheduling conventions, its model cache
or a platform template change, with no new revision, and those changes roll pods
as surely as a template bump does.

A ModelReplica's `status.servingRevision` names the revision its Serving verdict
was made for, so its ModelDeployment can tell a verdict about the new revision from
one left over from before an in-place update (`verdict_current`).
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Any, cast

from modelplane_models.shapes import Condition

from modelplane.core.vocabulary import ANNOTATION_SPEC_DIGEST, CROSSPLANE_FATAL_ERROR, Reason

_DIGEST_LEN = 16


def _annotations(manifest: Mapping[str, Any] | None) -> Mapping[str, Any]:
    metadata = (manifest or {}).get("metadata")
    if not isinstance(metadata, Mapping):
        return {}
    found = cast(Mapping[str, Any], metadata).get("annotations")
    return cast(Mapping[str, Any], found) if isinstance(found, Mapping) else {}


def spec_digest(manifest: Mapping[str, Any]) -> str:
    """A digest of `manifest` as composed, leaving out the digest annotation itself
    (so stamping a manifest twice gives the same digest)."""
    metadata: dict[str, Any] = dict(cast(Mapping[str, Any], manifest.get("metadata") or {}))
    annotations = {k: v for k, v in _annotations(manifest).items() if k != ANNOTATION_SPEC_DIGEST}
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    data = json.dumps({**manifest, "metadata": metadata}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()[:_DIGEST_LEN]


def stamped(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `manifest` carrying its own `spec_digest` as an annotation; only the
    top level, `metadata` and its annotations are new."""
    metadata: dict[str, Any] = dict(cast(Mapping[str, Any], manifest.get("metadata") or {}))
    metadata["annotations"] = {
        **_annotations(manifest),
        ANNOTATION_SPEC_DIGEST: spec_digest(manifest),
    }
    return {**manifest, "metadata": metadata}


def carried_digest(manifest: Mapping[str, Any] | None) -> str | None:
    """The digest annotation a manifest (composed or read back) carries, or None."""
    found = _annotations(manifest).get(ANNOTATION_SPEC_DIGEST)
    return found if isinstance(found, str) else None


def stale_read_back(composed: Mapping[str, Any], read_back: Mapping[str, Any] | None) -> bool:
    """Whether the workload read back from its cluster carries another digest than
    the manifest composed now: the change is not applied yet.

    A read-back with no digest at all was applied before workloads carried one (an
    upgrade): it is judged as before, on the Object's spec and the workload's own
    status, so an upgrade does not read every replica as stale while the provider
    adds the annotation. Nothing read back yet is not stale either: the kind's
    `serving` already says it has not been observed.
    """
    wanted = carried_digest(composed)
    have = carried_digest(read_back)
    return wanted is not None and have is not None and have != wanted


def verdict_current(serving_revision: object, revision: object) -> bool:
    """Whether a ModelReplica's Serving verdict, made for `serving_revision` (its
    `status.servingRevision`), is about the revision it carries now (`revision`, its
    `modelplane.ai/revision` annotation).

    A replica whose status names no revision was judged before replicas published
    one (an upgrade): its verdict is taken as it was, so an upgrade neither stalls
    nor mis-counts a rollout.
    """
    return not isinstance(serving_revision, str) or serving_revision == revision


def served_as_last_read(
    serving: Condition | None, serving_revision: object, revision: object
) -> bool:
    """Whether a ModelReplica serves the revision it carries, as last read: its `Serving`
    condition (`serving`) is True, or Unknown because its cluster is unreachable
    (`Reason.CLUSTER_UNREACHABLE`: the replica still publishes the revision its
    workloads last served), and the verdict is current (`verdict_current`). Whether
    such a replica counts as available is its deployment's call: it does not, on a
    cluster that is not Reachable.

    Unknown with Crossplane's `FatalError` is no verdict either: a reconcile of the
    replica failed (compose-model-replica restarting, a fatal result) and Crossplane
    wrote Unknown over the condition, keeping the rest of the status. Its workloads
    run as they did, so the last verdict stands, read from `status.servingRevision`,
    which compose-model-replica publishes only beside a True one: a failed reconcile
    must not read as a replica that stopped serving (its deployment would unroute it),
    any more than a reconcile that never ran does. A status with no revision (from an
    earlier release) names no verdict: not serving, as before."""
    if serving is None:
        return False
    if serving.status == "Unknown" and serving.reason == CROSSPLANE_FATAL_ERROR:
        return bool(serving_revision) and serving_revision == revision
    unreachable = serving.status == "Unknown" and serving.reason == Reason.CLUSTER_UNREACHABLE
    if serving.status != "True" and not unreachable:
        return False
    return verdict_current(serving_revision, revision)
