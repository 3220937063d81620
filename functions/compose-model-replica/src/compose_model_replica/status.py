"""What a rendered replica reports: its status block, Accepted and Serving."""

from collections.abc import Mapping
from typing import Any

from modelplane_models.model_replica import Status, WorkloadStatus
from modelplane_models.shapes import Condition

from modelplane.core.kinds.base import mapping
from modelplane.core.observed import find_condition
from modelplane.core.vocabulary import ACCEPTED, SERVING, Reason
from modelplane.workloads import RenderedReplica, replica_status
from modelplane.xfn import objects, report

# Each workload's key to the workload as read back from its cluster, or None.
Seen = Mapping[str, Mapping[str, Any] | None]


def composite_status(replica: RenderedReplica, seen: Seen) -> Status:
    """`status`: the namespace on the workload cluster, each workload's state, and the
    URL the replica is reached at once known."""
    return Status(
        namespace=replica.namespace.manifest["metadata"]["name"],
        workloads=[
            WorkloadStatus(
                role=w.role,
                kind=w.kind.kind,
                name=w.name,
                available=w.kind.serving(seen.get(w.key))[0],
            )
            for w in replica.workloads
        ],
        url=replica.url,
    )


def serving_condition(
    replica: RenderedReplica, seen: Seen, unapplied: list[str]
) -> report.Condition:
    """Serving: every workload serves, and serves what this replica's spec renders.

    A workload whose manifest changed is not serving the replica's spec until its
    provider has applied the change: until then its status describes what it ran,
    and a fleet rollout must not count the replica as serving the new revision.
    """
    if unapplied:
        why = f"{', '.join(unapplied)}: the change is not applied to the cluster yet"
        return report.Condition(SERVING, False, Reason.WORKLOAD_NOT_AVAILABLE, why)
    serving, why = replica_status(replica.workloads, seen)
    reason = Reason.WORKLOAD_AVAILABLE if serving else Reason.WORKLOAD_NOT_AVAILABLE
    return report.Condition(SERVING, serving, reason, why)


def unapplied(
    workloads: Mapping[str, Mapping[str, Any]], observed: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Keys of the workloads whose observed Object carries another manifest than the
    one desired now (a changed spec not yet applied). A new one is not observed at
    all, and one observed without its spec says nothing either way."""
    changed: list[str] = []
    for key, wrapped in sorted(workloads.items()):
        applied = _manifest(observed.get(key) or {})
        if applied is not None and applied != _manifest(wrapped):
            changed.append(key)
    return changed


def _manifest(obj: Mapping[str, Any]) -> object:
    return mapping(mapping(obj.get("spec")).get("forProvider")).get("manifest")


def lacking_condition(cluster: str, missing: list[str]) -> report.Condition | None:
    """Serving False naming what the cluster lacks that this replica needs, if anything."""
    if not missing:
        return None
    return report.Condition(
        SERVING,
        False,
        Reason.PREREQUISITES_MISSING,
        f"InferenceCluster {cluster} lacks {', '.join(missing)}, which this replica needs",
    )


def accepted_condition(
    keys: list[str], observed: dict[str, dict[str, Any]], cluster: str
) -> report.Condition:
    """Whether the cluster took every object: each Object's own Synced condition.

    provider-kubernetes sets Synced=False with the API server's answer when an
    apply is refused (a webhook, a quota, a missing CRD), so that message is the
    most useful thing to show.
    """
    refused = [
        f"{key}: {_words(synced)}"
        for key in keys
        if (synced := find_condition(observed.get(key), "Synced")) is not None
        and synced.status == "False"
    ]
    if refused:
        return report.Condition(ACCEPTED, False, Reason.WORKLOAD_REJECTED, "; ".join(refused))
    applied = [key for key in keys if objects.is_synced(observed.get(key))]
    if len(applied) == len(keys):
        return report.Condition(
            ACCEPTED,
            True,
            Reason.WORKLOAD_APPLIED,
            f"{len(keys)} objects applied to InferenceCluster {cluster}",
        )
    waiting = len(keys) - len(applied)
    return report.Condition(
        ACCEPTED,
        None,
        Reason.WORKLOAD_COMPOSED,
        f"{waiting} of {len(keys)} objects not yet applied to InferenceCluster {cluster}",
    )


def _words(synced: Condition) -> str:
    """What a provider said when it could not apply: its message, else its reason."""
    if synced.message is not None:
        return synced.message
    return synced.reason if synced.reason is not None else "not synced"
