"""Kubernetes version changes a created cluster's cloud can make.

EKS and GKE both upgrade a control plane one minor version at a time and never
downgrade one; EKS also refuses a node group above its control plane. A version
edited further than that is composed all the same, the cloud refuses the update,
and the managed resource stays Ready (only `Synced` turns False): nothing on the
InferenceCluster would say why nothing changes. So a change is judged here against
what the cloud runs, and a refused one keeps the version composed before.

Only a change is judged: the version composed before (the observed managed
resource's) is always accepted, since GKE's auto-upgrade may run a control plane
ahead of its `minMasterVersion` without anyone asking.
"""

import re
from collections.abc import Mapping
from typing import Any, Final

from modelplane_models.inference_cluster import InferenceCluster

from modelplane.core.issues import Issue
from modelplane.core.vocabulary import Reason

from .model import ObservedVersion, Provisioner

# `1.34`, `v1.34`, or what a cloud reports with a patch and build (`1.34.1-gke.1200`,
# `1.34.2-eks-abcdef`). The digits are bounded: an observed string no schema limits
# must not reach int() with thousands of them (it raises past 4,300).
_MINOR: Final = re.compile(r"v?(\d{1,9})\.(\d{1,9})(?:[.\-+].*)?")


def minor_of(version: object) -> tuple[int, int] | None:
    """A version's major and minor numbers; None for anything that is not a version."""
    if not isinstance(version, str):
        return None
    found = _MINOR.fullmatch(version.strip())
    return (int(found.group(1)), int(found.group(2))) if found else None


def judge(path: str, requested: str, observed: ObservedVersion) -> tuple[str, Issue | None]:
    """The version to compose and, when `requested` is a change the cloud refuses,
    the issue naming `path`: then the version composed before is kept."""
    if observed.composed is None or requested == observed.composed:
        return requested, None
    want = minor_of(requested)
    # Judge against the higher of what runs and what is composed: a composed upgrade
    # still in flight cannot be cancelled, so once it finishes the cluster runs the
    # composed minor, and going back below it would be a downgrade the cloud refuses.
    # One the cloud refused (Synced False) is not in flight: what runs is the base.
    composed = None if observed.refused else observed.composed
    known = [v for v in (minor_of(observed.running), minor_of(composed)) if v]
    base = max(known) if known else None
    if want is None or base is None:
        # Nothing to judge against (or admission's pattern let through no version):
        # the cloud answers as it will.
        return requested, None
    if want[0] == base[0] and base[1] <= want[1] <= base[1] + 1:
        return requested, None
    shown = f"{base[0]}.{base[1]}"
    running = minor_of(observed.running)
    since = (
        f"the running {shown}"
        if running is None or running == base
        else f"{shown}, which the cloud is upgrading to from {running[0]}.{running[1]}"
    )
    if want < base:
        why = "the cloud never downgrades a cluster"
    else:
        why = (
            "the cloud upgrades a cluster one minor version at a time: "
            f"raise it to {base[0]}.{base[1] + 1} first"
        )
    # What is kept is published and rendered for: its major.minor, whatever else the
    # managed resource's text carried.
    kept = minor_of(observed.composed) or base
    keeps = f"{kept[0]}.{kept[1]}"
    return keeps, Issue(
        path,
        f"cannot change from {since} to {requested}: {why}; the cluster keeps {keeps}",
        Reason.UNSUPPORTED_VERSION_CHANGE,
    )


def planned_version(
    provisioner: Provisioner,
    cluster: InferenceCluster,
    observed: Mapping[str, Any],
    default: str,
) -> tuple[str, Issue | None]:
    """The Kubernetes version to compose a created cluster with: its cloud sub-block's
    `version`, else `spec.kubernetesVersion`, else `default`, judged (`judge`) against
    the observed cloud cluster (`observed` holds the composed resources by key). The
    issue names the field the version came from (the sub-block's when it came from
    none, which is where a platform sets one)."""
    own = provisioner.version(cluster)
    inherited = cluster.spec.kubernetesVersion if cluster.spec else None
    requested = own or inherited or default
    path = (
        f"{provisioner.block_path()}.version" if own or not inherited else "spec.kubernetesVersion"
    )
    seen = provisioner.observed_version(observed.get(provisioner.cluster_key()) or {})
    return judge(path, requested, seen)
