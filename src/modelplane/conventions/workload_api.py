"""The Kubernetes Workload API (`scheduling.k8s.io`): gangs the default scheduler reads.

`spec.scheduling.gang.api: Workload` asks for it. Each Kubernetes release serves
its own version, and the shapes differ (kubernetes/api, scheduling/<version>/types.go
and core/v1/types.go at the tags ../shared/crds/SOURCES.md records):

- 1.35, v1alpha1: a Workload lists `podGroups` (a name and `policy.gang.minCount`);
  a pod joins through `spec.workloadRef` (`name`, `podGroup`).
- 1.36, v1alpha2: a Workload lists `podGroupTemplates`; the group itself is a
  PodGroup object (`podGroupTemplateRef.workload`) that a workload's controller
  creates. The Deployment controller creates none, so Modelplane composes it; a
  pod joins through `spec.schedulingGroup.podGroupName`.
- 1.37, v1beta1: as v1alpha2, the PodGroup naming its template through
  `workloadRef` (`workloadName`, `templateName`).

What joins (see docs/schedulers/default.md):
- Only pods whose template the API server keeps whole: a Deployment's. The
  LeaderWorkerSet (v0.10) and LLMInferenceService CRDs embed an older PodSpec
  without these fields, so the API server would prune them: such a unit that
  needs a gang is reported (`GangLimited`), never left ungated silently.
- A disaggregated replica (more than one role): every Deployment pod of the
  replica, in one pod group whose minCount is all of them, so prefill and decode
  start together or not at all (each role's full count is then its minimum).
  A pod group is the API's unit of all-or-nothing in these versions; one group
  per role would gang each role on its own.
- A replica of one role runs independent single-pod workers: nothing to gang.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from modelplane.conventions import metadata as md
from modelplane.conventions.schedulers import ROOT
from modelplane.conventions.workload import Unit, Workload
from modelplane.core.issues import Issue, warning
from modelplane.core.kinds import DEPLOYMENT
from modelplane.core.kinds.base import mapping
from modelplane.core.naming import hashed_name
from modelplane.core.vocabulary import GROUP as LABEL_GROUP
from modelplane.core.vocabulary import LABEL_MANAGED_BY, LABEL_ROLE, MANAGED_BY, Reason

GROUP: Final = "scheduling.k8s.io"
# The version each Kubernetes minor serves, by minor.
SERVED: Final[Mapping[int, str]] = {35: "v1alpha1", 36: "v1alpha2", 37: "v1beta1"}
# The pod group every pod of a ganged replica joins.
POD_GROUP: Final = "replica"
FIELD: Final = f"{ROOT}.gang.api"


def served_version(kubernetes_version: str) -> str | None:
    """The `scheduling.k8s.io` Workload version a Kubernetes minor serves, or None."""
    major, _, minor = kubernetes_version.removeprefix("v").partition(".")
    if major != "1" or not minor.split(".")[0].isdigit():
        return None
    return SERVED.get(int(minor.split(".")[0]))


def unavailable(kubernetes_version: str) -> str:
    """Why a cluster at `kubernetes_version` gets no Workload objects."""
    first, last = min(SERVED), max(SERVED)
    return (
        f"Kubernetes {kubernetes_version} serves no scheduling.k8s.io Workload version "
        f"Modelplane composes (1.{first} to 1.{last}: "
        + ", ".join(f"1.{m} {v}" for m, v in sorted(SERVED.items()))
        + "); its pods are not ganged"
    )


@dataclass
class WorkloadGang:
    objects: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    issues: list[Issue] = field(default_factory=list[Issue])


def plan_workload_gang(workloads: Sequence[Workload], version: str, replica: str) -> WorkloadGang:
    """The Workload (and PodGroup) of one replica at API `version`, joining its pods.

    Edits the pod specs of `workloads` in place; `replica` names the ModelReplica.
    """
    gang = WorkloadGang()
    units = [(w, u) for w in workloads for u in w.units if u.pod_set.replicas > 0]
    disaggregated = len({u.role for _, u in units}) > 1
    joined: list[tuple[Workload, Unit]] = []
    for workload, unit in units:
        if not (disaggregated or unit.pod_set.multi_pod):
            continue
        if workload.kind is not DEPLOYMENT:
            gang.issues.append(_not_carried(workload, unit, version))
            continue
        joined.append((workload, unit))
    if not joined:
        return gang
    namespace = joined[0][0].namespace
    name = hashed_name(replica, "workload", namespace or "", replica)
    min_count = sum(u.pod_set.pods for _, u in joined)
    policy = {"gang": {"minCount": min_count}}
    labels = _labels(joined[0][0])
    metadata = _metadata(name, namespace, labels)
    api_version = f"{GROUP}/{version}"
    if version == "v1alpha1":
        spec: dict[str, Any] = {"podGroups": [{"name": POD_GROUP, "policy": policy}]}
        pod_field, value = "workloadRef", {"name": name, "podGroup": POD_GROUP}
    else:
        spec = {"podGroupTemplates": [{"name": POD_GROUP, "schedulingPolicy": policy}]}
        group = hashed_name(f"{replica}-{POD_GROUP}", "podgroup", namespace or "", replica)
        ref = (
            {
                "podGroupTemplateRef": {
                    "workload": {"workloadName": name, "podGroupTemplateName": POD_GROUP}
                }
            }
            if version == "v1alpha2"
            else {"workloadRef": {"workloadName": name, "templateName": POD_GROUP}}
        )
        gang.objects.append(
            {
                "apiVersion": api_version,
                "kind": "PodGroup",
                "metadata": _metadata(group, namespace, labels),
                "spec": {**ref, "schedulingPolicy": policy},
            }
        )
        pod_field, value = "schedulingGroup", {"podGroupName": group}
    gang.objects.append(
        {"apiVersion": api_version, "kind": "Workload", "metadata": metadata, "spec": spec}
    )
    for _, unit in joined:
        for site in unit.pod_set.sites:
            for path, pod in site.specs:
                md.set_pod_field(pod, pod_field, dict(value), path, unit.title, gang.issues)
    return gang


def _labels(workload: Workload) -> dict[str, str]:
    """Modelplane's identity labels of the replica (not its role: the gang spans roles)."""
    source = mapping(mapping(workload.manifest.get("metadata")).get("labels"))
    labels = {
        k: v
        for k, v in source.items()
        if isinstance(v, str) and k.partition("/")[0] == LABEL_GROUP and k != LABEL_ROLE
    }
    labels[LABEL_MANAGED_BY] = MANAGED_BY
    return dict(sorted(labels.items()))


def _metadata(name: str, namespace: str | None, labels: dict[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if namespace:
        metadata["namespace"] = namespace
    return metadata


def _not_carried(workload: Workload, unit: Unit, version: str) -> Issue:
    pod_field = "workloadRef" if version == "v1alpha1" else "schedulingGroup"
    return warning(
        FIELD,
        f"{unit.title}: the {workload.kind.kind} CRD's pod template has no {pod_field} "
        f"field (the API server would prune it), so its pods cannot join a "
        f"{GROUP}/{version} Workload and start pod by pod",
        Reason.GANG_LIMITED,
    )
