"""The Native backend: a Deployment per single-node role, a LeaderWorkerSet per gang."""

from dataclasses import dataclass
from typing import Any

from modelplane.core.kinds import DEPLOYMENT, LEADER_WORKER_SET, WorkloadKind

from .identity import (
    DEPLOYMENT_NAME_MAX,
    LEADER_WORKER_SET_NAME_MAX,
    identity_labels,
    selector_labels,
    workload_name,
)
from .model import ReplicaInput, RoleInput
from .pods import PodShape, role_shape, shape_pod


@dataclass(frozen=True)
class Wiring:
    """Where a role's workload goes and what it is wired to: its namespace, its
    ResourceClaimTemplate, where a decode role's engines reach its prefill Service,
    the IMEX channel template of a multi-node role's ComputeDomain, and whether the
    replica's prefill/decode routing is llm-d's (`disaggregation`)."""

    namespace: str
    claim: str | None
    prefill: str | None = None
    channel: str | None = None
    pd_routed: bool = False


def deployment(replica: ReplicaInput, role: RoleInput, wiring: Wiring) -> dict[str, Any]:
    """One Deployment whose pods are the role's single-node workers."""
    # A Deployment's pods are single-node workers: no IMEX channel to join.
    shape = _shape(replica, role, wiring, serving=True, channel=None)
    template = shape_pod(role.template, f"{role.path}.template", shape)
    return {
        **_head(DEPLOYMENT, replica, role, wiring, DEPLOYMENT_NAME_MAX),
        "spec": {
            "replicas": role.placed.workers,
            "selector": {"matchLabels": selector_labels(replica, role.placed.role)},
            # The fleet scheduler charged the pool exactly `count` nodes, so
            # there is no spare GPU to surge onto: replace one pod at a time (for
            # one pod, the same as Recreate). Surge happens across the fleet,
            # where the fleet scheduler can find room (scheduling.rollout).
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
            },
            "template": template,
        },
    }


def leader_worker_set(replica: ReplicaInput, role: RoleInput, wiring: Wiring) -> dict[str, Any]:
    """One LeaderWorkerSet: `count` groups, each one worker spread over its nodes."""
    path = f"{role.path}.template"
    leader = _shape(replica, role, wiring, serving=True, channel=wiring.channel)
    follower = _shape(replica, role, wiring, serving=False, channel=wiring.channel)
    return {
        **_head(LEADER_WORKER_SET, replica, role, wiring, LEADER_WORKER_SET_NAME_MAX),
        "spec": {
            "replicas": role.placed.workers,
            # Create the whole group at once (a gang scheduler sees it whole),
            # and restart it whole: a sharded engine cannot lose one rank.
            "startupPolicy": "LeaderCreated",
            # As for a Deployment: no spare nodes to surge a group onto, so one
            # group at a time (LWS's own defaults, stated so they cannot drift).
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
            },
            "leaderWorkerTemplate": {
                "size": role.placed.topology.nodes_per_worker,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": shape_pod(role.template, path, leader),
                "workerTemplate": shape_pod(role.template, path, follower),
            },
        },
    }


def native_workload(
    replica: ReplicaInput, role: RoleInput, wiring: Wiring
) -> tuple[WorkloadKind, dict[str, Any]]:
    """The role's workload and its kind: a Deployment for single-node workers, else an
    LWS."""
    if role.placed.topology.nodes_per_worker == 1:
        return DEPLOYMENT, deployment(replica, role, wiring)
    return LEADER_WORKER_SET, leader_worker_set(replica, role, wiring)


def _shape(
    replica: ReplicaInput, role: RoleInput, wiring: Wiring, *, serving: bool, channel: str | None
) -> PodShape:
    """A Native role's pods mount the replica's model cache themselves."""
    return role_shape(
        replica,
        role,
        wiring.claim,
        serving=serving,
        prefill_address=wiring.prefill,
        mount_cache=True,
        channel=channel,
        pd_routed=wiring.pd_routed,
    )


def _head(
    kind: WorkloadKind, replica: ReplicaInput, role: RoleInput, wiring: Wiring, name_max: int
) -> dict[str, Any]:
    """apiVersion, kind and metadata of a role's workload object."""
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {
            "name": workload_name(replica, role.placed.role, name_max),
            "namespace": wiring.namespace,
            "labels": identity_labels(replica, role.placed.role),
        },
    }
