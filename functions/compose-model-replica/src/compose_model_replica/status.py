"""What a rendered replica reports: its status block, Accepted and Serving."""

from collections.abc import Mapping, Sequence
from typing import Any, cast

from modelplane_models.inference_cluster import InferenceCluster
from modelplane_models.model_replica import Status, WorkloadStatus
from modelplane_models.shapes import Condition

from modelplane.core.applied import carried_digest, spec_digest, stale_read_back
from modelplane.core.kinds.base import mapping
from modelplane.core.observed import first_condition, wrapped_manifest
from modelplane.core.vocabulary import ANNOTATION_SPEC_DIGEST, ConditionType, Reason
from modelplane.workloads import RenderedReplica, replica_serving
from modelplane.xfn import report

# Each workload's key to the workload as read back from its cluster, or None.
Seen = Mapping[str, Mapping[str, Any] | None]


def verdicts(replica: RenderedReplica, seen: Seen) -> list[tuple[bool, str]]:
    """Whether each workload serves, and why (`WorkloadKind.serving`), in the order of
    the replica's workloads: read once for the status and for Serving."""
    return [w.kind.serving(seen.get(w.key)) for w in replica.workloads]


def composite_status(
    replica: RenderedReplica, served: list[tuple[bool, str]], revision: str | None
) -> Status:
    """`status`: the namespace on the workload cluster, each workload's state (`served`:
    its `verdicts`), the URL the replica is reached at once known, and the revision
    it serves (the replica's own annotation when its Serving verdict is True, an empty
    string otherwise)."""
    return Status(
        servingRevision=revision,
        namespace=replica.namespace.manifest["metadata"]["name"],
        workloads=[
            WorkloadStatus(role=w.role, kind=w.kind.kind, name=w.name, available=available)
            for w, (available, _) in zip(replica.workloads, served, strict=True)
        ],
        url=replica.url,
    )


def serving_condition(
    replica: RenderedReplica,
    served: list[tuple[bool, str]],
    unapplied: list[str],
    route: tuple[bool, str] | None = None,
) -> report.Condition:
    """Serving: every workload serves, and serves what this replica's spec renders, and
    (`route`: its HTTPRoute's verdict, when it has one behind its cluster's Gateway)
    the Gateway routes to it.

    A workload whose manifest changed is not serving the replica's spec until its
    provider has applied the change: until then its status describes what it ran,
    and a fleet rollout must not count the replica as serving the new revision. A
    replica the Gateway does not route to (its route not accepted, or its
    InferencePool backend refused) is reached by nobody: a rollout must not retire a
    routable predecessor for it, nor a ModelService route to it.
    """
    if unapplied:
        why = "; ".join(unapplied)
        return report.Condition(ConditionType.SERVING, False, Reason.WORKLOAD_NOT_AVAILABLE, why)
    serving, why = replica_serving(replica.workloads, served)
    if not serving:
        return report.Condition(ConditionType.SERVING, False, Reason.WORKLOAD_NOT_AVAILABLE, why)
    if route is not None and not route[0]:
        return report.Condition(ConditionType.SERVING, False, Reason.ROUTE_NOT_READY, route[1])
    return report.Condition(ConditionType.SERVING, True, Reason.WORKLOAD_AVAILABLE, why)


def unapplied(
    workloads: Mapping[str, Mapping[str, Any]],
    observed: Mapping[str, Mapping[str, Any]],
    seen: Seen,
) -> list[str]:
    """Why each workload whose change is not applied yet is not, by key: its observed
    Object carries another manifest than the one desired now (Crossplane has not
    written it), or the workload read back from the cluster (`seen`) carries another
    spec digest (the provider has not applied it: an Object's spec is written long
    before that). A new workload is not observed at all, and one observed without
    its spec says nothing either way."""
    changed: list[str] = []
    for key, wrapped in sorted(workloads.items()):
        composed = mapping(wrapped_manifest(wrapped))
        applied = wrapped_manifest(observed.get(key) or {})
        # Compared without the digest annotation: an Object written before workloads
        # carried one (an upgrade) holds the same manifest without it, and is applied.
        if applied is not None and (
            not isinstance(applied, Mapping)
            # The composed manifest carries its digest (stamped when rendered).
            or spec_digest(cast(Mapping[str, Any], applied))
            != (carried_digest(composed) or spec_digest(composed))
        ):
            changed.append(f"{key}: the change is not applied to the cluster yet")
        elif stale_read_back(composed, seen.get(key)):
            have, want = carried_digest(seen.get(key)), carried_digest(composed)
            changed.append(
                f"{key}: the change is not applied to the cluster yet (its read-back "
                f"carries {ANNOTATION_SPEC_DIGEST} {have}, not {want})"
            )
    return changed


def unreachable_condition(
    cluster: InferenceCluster, verdict: report.Condition
) -> report.Condition | None:
    """Serving Unknown while the replica's cluster is not Reachable, else None.

    Its workloads' read-back is what the provider last saw, not what runs now: the
    replica may serve (the control plane lost only its connection) or not (the
    cluster is gone), so it is neither counted as serving nor called down, as the
    node lifecycle controller sets an unreachable node's pods' Ready to Unknown. The
    message keeps the last verdict, whose revision status.servingRevision keeps."""
    status = cluster.status
    reachable = first_condition(status.conditions if status else None, ConditionType.REACHABLE)
    if reachable is None or reachable.status != "False":
        return None
    name = (cluster.metadata.name if cluster.metadata else None) or ""
    return report.Condition(
        ConditionType.SERVING,
        None,
        Reason.CLUSTER_UNREACHABLE,
        f"InferenceCluster {name} is unreachable (Reachable=False), so whether this "
        f"replica serves is not known; as last read: {verdict.message}",
    )


def lacking_condition(cluster: str, missing: list[str]) -> report.Condition | None:
    """Serving False naming what the cluster lacks that this replica needs, if anything."""
    if not missing:
        return None
    return report.Condition(
        ConditionType.SERVING,
        False,
        Reason.PREREQUISITES_MISSING,
        f"InferenceCluster {cluster} lacks {', '.join(missing)}, which this replica needs",
    )


def accepted_condition(
    keys: list[str], said: Mapping[str, Sequence[Condition]], cluster: str
) -> report.Condition:
    """Whether the cluster took every object: each Object's own Synced condition
    (`said`: each key's observed conditions, as `observed.conditions` reads them).

    provider-kubernetes sets Synced=False with the API server's answer when an
    apply is refused (a webhook, a quota, a missing CRD), so that message is the
    most useful thing to show.
    """
    found = [(key, first_condition(said[key], "Synced")) for key in keys]
    refused = [
        f"{key}: {_words(synced)}"
        for key, synced in found
        if synced is not None and synced.status == "False"
    ]
    if refused:
        return report.Condition(
            ConditionType.ACCEPTED, False, Reason.WORKLOAD_REJECTED, "; ".join(refused)
        )
    applied = [key for key, synced in found if synced is not None and synced.status == "True"]
    if len(applied) == len(keys):
        return report.Condition(
            ConditionType.ACCEPTED,
            True,
            Reason.WORKLOAD_APPLIED,
            f"{len(keys)} objects applied to InferenceCluster {cluster}",
        )
    waiting = len(keys) - len(applied)
    return report.Condition(
        ConditionType.ACCEPTED,
        None,
        Reason.WORKLOAD_COMPOSED,
        f"{waiting} of {len(keys)} objects not yet applied to InferenceCluster {cluster}",
    )


def _words(synced: Condition) -> str:
    """What a provider said when it could not apply: its message, else its reason."""
    if synced.message is not None:
        return synced.message
    return synced.reason if synced.reason is not None else "not synced"
