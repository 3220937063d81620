"""What every workload kind says about itself, and the shapes it says it in.

A workload kind is a Kubernetes kind Modelplane renders onto a workload cluster
and whose controller reports whether it serves. Each kind says, once: its API
version, where it keeps its pods' templates (`pod_sites`), how those pods group
into gangs (`pod_sets`: size and replicas), the condition that means it serves,
and the status its controller reports once healthy (what the render simulation
shows). The renderer, the scheduler conventions, the manifest validator, the
render simulation and the summary all ask the kind, so they agree.
"""

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from modelplane.core.numbers import integer
from modelplane.core.observed import (
    ObservedWorkload,
    find_condition,
    first_condition,
    generations,
    workload,
)


@dataclass(frozen=True)
class PodSite:
    """One place a workload keeps pod metadata, and the pod specs created with it.

    `path` is where `metadata` (the labels and annotations the pods get) lives.
    For a Deployment or LeaderWorkerSet template that is the template's
    `metadata`; for an LLMInferenceService it is the spec block (main or
    `prefill`) whose labels and annotations KServe copies onto the pods of its
    `template` and `worker`. `specs` pairs each pod spec with its path; a KServe
    block with neither has none (KServe builds its pods from presets).
    """

    path: str
    metadata: dict[str, Any] = field(hash=False)
    specs: tuple[tuple[str, dict[str, Any]], ...] = field(hash=False)


@dataclass(frozen=True)
class PodSet:
    """Pods an in-cluster scheduler groups the same way: `replicas` gangs of `size` pods.

    `owner` is the kind the scheduler sees owning the pods: for an
    LLMInferenceService, what KServe creates from the block (a LeaderWorkerSet
    when it has a `worker`, otherwise a Deployment). `part` names the block of a
    kind with several (`prefill`), empty otherwise; `lws_name` is the name of the
    LeaderWorkerSet that runs the pods, when one does.
    """

    owner: "WorkloadKind"
    replicas: int
    sites: tuple[PodSite, ...] = field(hash=False)
    size: int = 1
    part: str = ""
    lws_name: str | None = None
    leader_ready: bool = False

    @property
    def pods(self) -> int:
        return self.replicas * self.size

    @property
    def multi_pod(self) -> bool:
        """Whether one worker spans several pods, so a gang scheduler must start them together."""
        return self.owner.gangs_pods and self.size > 1


class WorkloadKind(abc.ABC):
    """One kind in the registry (`modelplane.core.kinds.WORKLOAD_KINDS`)."""

    kind: ClassVar[str]
    api_version: ClassVar[str]
    """The version the renderer writes; any version of the same group is this kind."""
    serving_condition: ClassVar[str]
    """The condition type the kind's controller sets True once the workload serves."""
    gangs_pods: ClassVar[bool] = False
    """Whether one of its workers is a group of pods that must start together."""
    complete_when: ClassVar[tuple[str, ...]] = ()
    """Status counts that must reach `spec.replicas` (default 1) besides the serving
    condition. A Deployment or LeaderWorkerSet that may lose one pod or group to a
    rolling update keeps its Available condition True while that one restarts (for
    one pod: while nothing runs), so the condition alone would count a restarting
    replica as serving, and a fleet rollout would take the next one down too."""
    model: ClassVar[type[ObservedWorkload] | None] = None
    """The generated model (`modelplane_models`) `serving` reads an observed object
    of a kind that runs pods through; every name in `complete_when` is a field of its
    status. A kind without one decides on its serving condition alone."""
    observes_generation: ClassVar[bool] = False
    """Whether its controller publishes `status.observedGeneration`. Until that reaches
    `metadata.generation` the status describes an older spec: right after an update,
    provider-kubernetes reads back the API server's answer to the apply, whose status
    is still the one the controller wrote for the previous generation."""
    crd: ClassVar[str | None] = None
    """The CustomResourceDefinition that serves it (None for a built-in kind): what a
    cluster must have before a workload of this kind can be applied there."""

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    def __repr__(self) -> str:
        return self.kind

    def matches(self, manifest: Mapping[str, Any]) -> bool:
        """Whether `manifest` is of this kind: its kind, in this group (any version)."""
        api_version = manifest.get("apiVersion")
        return (
            manifest.get("kind") == self.kind
            and isinstance(api_version, str)
            and group_of(api_version) == self.group
        )

    @abc.abstractmethod
    def pod_sites(self, spec: dict[str, Any], *, fill: bool) -> list[PodSite]:
        """Every pod template the object's `spec` embeds, sharing its dicts (see `pod_sites`)."""

    @abc.abstractmethod
    def pod_sets(self, name: str, spec: dict[str, Any], *, fill: bool) -> list[PodSet]:
        """How the pods of the object named `name` group, with their sites."""

    @abc.abstractmethod
    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """The status the kind's controller reports once the object serves."""

    def healthy_status_on(self, manifest: Mapping[str, Any], cluster: str) -> dict[str, Any]:
        """`healthy_status` of a whole manifest applied to the cluster named `cluster`,
        for kinds whose healthy status says more than their spec (a Gateway's address)."""
        return self.healthy_status(mapping(manifest.get("spec")))

    def readiness(self) -> dict[str, Any]:
        """The provider-kubernetes Object `spec.readiness` block for this kind.

        DeriveFromObject mirrors only a `Ready` condition, so a CEL query over
        `object.status.conditions` is the one policy that checks the right condition
        for every kind. It guards with has(), so a workload whose controller has not
        written status yet is simply not ready.
        """
        condition = self.serving_condition
        query = (
            "has(object.status) && has(object.status.conditions) && "
            f"object.status.conditions.exists(c, c.type == '{condition}' && c.status == 'True')"
        )
        wanted = "(has(object.spec) && has(object.spec.replicas) ? object.spec.replicas : 1)"
        for field_name in self.complete_when:
            # The API server omits a count that is 0.
            query += (
                f" && (has(object.status.{field_name}) ? object.status.{field_name} : 0)"
                f" >= {wanted}"
            )
        if self.observes_generation:
            # An object with no generation, or a status with no observedGeneration, is
            # judged on its status alone, as `serving` does (`_unobserved`).
            query += (
                " && (!has(object.metadata) || !has(object.metadata.generation) ||"
                " !has(object.status.observedGeneration) ||"
                " object.status.observedGeneration >= object.metadata.generation)"
            )
        return {"policy": "DeriveFromCelQuery", "celQuery": query}

    def serving(self, observed: Mapping[str, Any] | None) -> tuple[bool, str]:
        """Whether an observed object of this kind serves, and a message saying why.

        `observed` is the object as read back from its cluster, or None when it
        has not been observed yet. The verdict agrees with `readiness()`.
        """
        condition = self.serving_condition
        if not observed:
            return False, f"{self.kind} has not been observed yet"
        name = mapping(observed.get("metadata")).get("name", "")
        label = f"{self.kind} {name}".strip()
        if self.model is None:
            read, found = None, find_condition(observed, condition)
        else:
            read = workload(observed, self.model)
            status = read.status if read is not None else None
            found = first_condition(status.conditions if status is not None else None, condition)
        if found is None:
            return False, f"{label} has not reported {condition} yet"
        if found.status == "True":
            # A True condition the controller wrote for an older spec says nothing
            # about this one; a False one is worth showing whatever its age.
            unobserved = self._unobserved(observed)
            if unobserved is not None:
                return False, f"{label} is {condition} for an older spec: {unobserved}"
            return (
                self._complete(read, label, condition)
                if read
                else (True, f"{label} is {condition}")
            )
        detail = found.message or found.reason or f"status {found.status}"
        return False, f"{label} is not {condition}: {detail}"

    def _unobserved(self, observed: Mapping[str, Any]) -> str | None:
        """Why the status describes an older spec than the object's (`observes_generation`),
        or None. An object with no `metadata.generation`, or a status with a serving
        condition but no `observedGeneration`, is judged on its status alone: a
        controller that publishes the field writes it with every status (the apply's
        answer right after an update carries the previous one), so its absence means
        a controller that never does (LeaderWorkerSet before v0.9.0), whose replicas
        would otherwise never serve."""
        if not self.observes_generation:
            return None
        generation, seen = generations(observed)
        if generation is None or seen is None or seen >= generation:
            return None
        return (
            f"its controller has not observed generation {generation} yet"
            f" (its status is for generation {seen})"
        )

    def _complete(self, read: ObservedWorkload, label: str, condition: str) -> tuple[bool, str]:
        asked = read.spec.replicas if read.spec is not None else None
        wanted = 1 if asked is None else asked
        for field_name in self.complete_when:
            # A field of the kind's status model (tests/core/kinds hold the names).
            reported: object = getattr(read.status, field_name, None)
            have = reported if isinstance(reported, int) else 0
            if have < wanted:
                return False, f"{label} is {condition} with {field_name} {have} of {wanted}"
        return True, f"{label} is {condition}"


@dataclass(frozen=True)
class RenderedWorkload:
    """A workload the renderer produced for one replica, as the scheduler conventions
    take it and hand it back: its key among the replica's remote objects, the role
    it runs, its registered kind and its manifest."""

    key: str
    role: str
    kind: WorkloadKind
    manifest: dict[str, Any] = field(hash=False)

    @property
    def name(self) -> str:
        name = mapping(self.manifest.get("metadata")).get("name")
        return name if isinstance(name, str) else ""


def group_of(api_version: str) -> str:
    """The API group of an apiVersion; "" for the core group ("v1")."""
    group, slash, _ = api_version.partition("/")
    return group if slash else ""


def as_list(value: object) -> list[Any]:
    """`value` when it is a list, else an empty one."""
    return cast(list[Any], value) if isinstance(value, list) else []


def mapping(value: object) -> dict[str, Any]:
    """`value` when it is an object, else an empty one."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def count(value: object, default: int) -> int:
    """An integer field as written, or `default` when absent or not an integer."""
    found = integer(value)
    return default if found is None else found


def every_replica_serving(
    spec: Mapping[str, Any], counts: tuple[str, ...], conditions: list[dict[str, str]]
) -> dict[str, Any]:
    """The status of a replicated kind whose every replica serves: each of `counts`
    equal to `spec.replicas` (default 1), then `conditions`."""
    return {**dict.fromkeys(counts, count(spec.get("replicas"), 1)), "conditions": conditions}


def slot(parent: dict[str, Any], key: str, fill: bool) -> dict[str, Any]:
    """`parent[key]`; when absent, a new dict, stored in `parent` only with `fill`."""
    value = parent.get(key)
    if isinstance(value, dict):
        return cast(dict[str, Any], value)
    created: dict[str, Any] = {}
    if fill and key not in parent:
        parent[key] = created
    return created


def template_site(parent: dict[str, Any], key: str, path: str, fill: bool) -> list[PodSite]:
    """The site of a PodTemplateSpec at `parent[key]` (none when absent)."""
    template = parent.get(key)
    if not isinstance(template, dict):
        return []
    template = cast(dict[str, Any], template)
    return [
        PodSite(
            path=f"{path}.{key}.metadata",
            metadata=slot(template, "metadata", fill),
            specs=((f"{path}.{key}.spec", slot(template, "spec", fill)),),
        )
    ]
