"""Hand a replica's rendered workloads to the cluster's in-cluster scheduler."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from modelplane.conventions import metadata as md
from modelplane.conventions.config import SchedulingConfig, priority_error
from modelplane.conventions.gang import ReplicaGang, plan_gang, plan_replica_gang
from modelplane.conventions.schedulers import ROOT, Platform
from modelplane.conventions.template import Template, TemplateContext, context_values
from modelplane.conventions.workload import Unit, Workload, child, view
from modelplane.conventions.workload_api import plan_workload_gang
from modelplane.core.issues import Issue, has_errors, unique
from modelplane.core.kinds import LLM_INFERENCE_SERVICE, RenderedWorkload
from modelplane.core.kinds import leader_worker_set as lws
from modelplane.core.labels import value_error
from modelplane.core.priority import priority_allowed, resolve_priority
from modelplane.core.refs import ObjectRef
from modelplane.core.vocabulary import Reason


@dataclass
class ConventionResult:
    """The workloads as handed back (same keys, conventions applied), the gang
    objects they need, and every issue found."""

    workloads: list[RenderedWorkload]
    gangs: list[dict[str, Any]]
    issues: list[Issue]

    @property
    def ok(self) -> bool:
        """No Error: the workloads may be composed as returned."""
        return not has_errors(self.issues)


def apply_conventions(
    workloads: Sequence[RenderedWorkload],
    config: SchedulingConfig,
    context: TemplateContext,
    *,
    priority_classes: Sequence[Mapping[str, Any]] = (),
    running: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> ConventionResult:
    """Apply the cluster's scheduling conventions to one ModelReplica's workloads.

    `context.priority` is the replica's own priority (None when it asked for
    none); it falls back to the cluster's defaultPriority. `priority_classes` are
    PriorityClass objects observed on the cluster, which schedulers that weigh
    priorities by value read (`Scheduler.reads_priority_classes`). `running` holds
    what was read back from the cluster for each workload, by its key: a scheduler
    may keep labels it refuses to change there (`Scheduler.keep_running`). Never
    raises; inputs are not modified.
    """
    issues: list[Issue] = list(config.errors)
    platform = resolve_platform(config, context, issues, priority_classes)
    views = [view(rendered) for rendered in workloads]
    replica_gang, split = plan_replica_gang(views, config, platform, context.replica)
    issues.extend(split)
    gangs: list[dict[str, Any]] = [replica_gang.object] if replica_gang else []
    for rendered, workload in zip(workloads, views, strict=True):
        observed = _same_object(workload, (running or {}).get(rendered.key))
        gangs.extend(_apply(workload, config, platform, issues, replica_gang, observed))
    if config.workload_api is not None and not has_errors(issues):
        # One Workload for the whole replica, across its workloads (prefill and decode).
        planned = plan_workload_gang(views, config.workload_api, context.replica)
        gangs.extend(planned.objects)
        issues.extend(planned.issues)
    handed = [replace(r, manifest=w.manifest) for r, w in zip(workloads, views, strict=True)]
    gangs.sort(key=lambda o: (o["apiVersion"], o["kind"], o["metadata"]["name"]))
    return ConventionResult(workloads=handed, gangs=gangs, issues=unique(issues))


def resolve_platform(
    config: SchedulingConfig,
    context: TemplateContext,
    issues: list[Issue],
    priority_classes: Sequence[Mapping[str, Any]] = (),
) -> Platform:
    """What the cluster's block resolves to for one replica: its queue, priority,
    labels and annotations, rendered; every problem appended to `issues`."""
    resolved = resolve_priority(context.priority, config.default_priority)
    priority = _priority(resolved, config, issues)
    values = context_values(context, priority)
    return Platform(
        queue=_render_queue(config, values, issues),
        priority=priority,
        labels=_render(config.default_labels, values, "defaultLabels", issues),
        annotations=_render(config.default_annotations, values, "defaultAnnotations", issues),
        priority_values=priority_values(priority_classes),
    )


def replica_prerequisites(
    config: SchedulingConfig, context: TemplateContext, tenant_namespace: str | None
) -> tuple[ObjectRef | None, tuple[ObjectRef, ...]]:
    """The queue object a replica's pods go to and what its priority needs to exist,
    on the cluster `config` describes (nothing for a replica the block cannot place).
    `tenant_namespace` is None when the cluster's tenancy cannot place the replica;
    a queue that lives in the tenant namespace is then unknown."""
    issues: list[Issue] = []
    platform = resolve_platform(config, context, issues)
    if has_errors(issues):
        return None, ()
    queue = config.scheduler.queue_object(platform, tenant_namespace)
    priority = platform.priority
    return queue, config.scheduler.priority_objects(priority) if priority else ()


def priority_values(priority_classes: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Name to value of the PriorityClass objects the caller supplied."""
    out: dict[str, int] = {}
    for obj in priority_classes:
        metadata = obj.get("metadata")
        name = (
            cast(Mapping[str, Any], metadata).get("name") if isinstance(metadata, Mapping) else None
        )
        value = obj.get("value")
        if isinstance(name, str) and isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out


def _priority(resolved: str | None, config: SchedulingConfig, issues: list[Issue]) -> str | None:
    if resolved is None:
        return None
    problem = priority_error(resolved)
    if problem is None and not priority_allowed(resolved, list(config.allowed_priorities)):
        problem = (
            f"priority {resolved!r} is not in this cluster's allowedPriorities "
            f"({', '.join(config.allowed_priorities)})"
        )
    if problem is None:
        problem = config.scheduler.priority_error(resolved)
    if problem is not None:
        issues.append(Issue("spec.priority", problem, Reason.PRIORITY_NOT_ALLOWED))
        return None
    return resolved


def _render(
    entries: tuple[tuple[str, Template], ...],
    values: dict[str, str],
    kind: str,
    issues: list[Issue],
) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, template in entries:
        rendered = template.render(values)
        if kind == "defaultLabels" and (problem := value_error(rendered)) is not None:
            issues.append(
                Issue(
                    f"{ROOT}.{kind}[{key}]",
                    f"{template.source!r} renders label value {rendered!r}, which {problem}",
                    Reason.INVALID_SCHEDULING_TEMPLATE,
                )
            )
            continue
        out[key] = rendered
    return out


def _render_queue(
    config: SchedulingConfig, values: dict[str, str], issues: list[Issue]
) -> str | None:
    if config.queue is None:
        return None
    rendered = config.queue.render(values)
    problem = config.scheduler.queue_error(rendered)
    if problem is not None:
        issues.append(
            Issue(
                f"{ROOT}.queue",
                f"{config.queue.source!r}: {problem}",
                Reason.INVALID_SCHEDULING_TEMPLATE,
            )
        )
        return None
    return rendered


def _apply(
    workload: Workload,
    config: SchedulingConfig,
    platform: Platform,
    issues: list[Issue],
    replica_gang: ReplicaGang | None,
    observed: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    scheduler = config.scheduler
    meta = child(workload.manifest, "metadata")
    on_object = scheduler.object_keys(workload.kind, platform)
    obj_labels = {**platform.labels, **on_object.labels}
    obj_annotations = {**platform.annotations, **on_object.annotations}
    wanted = set(obj_labels)
    if observed is not None:
        issues.extend(scheduler.keep_running(workload, obj_labels, observed))
    md.write(meta, "labels", obj_labels, "metadata", workload.title, issues)
    # A label kept absent stays absent, whatever the rendered manifest carried.
    md.remove(meta, "labels", wanted - set(obj_labels))
    md.write(meta, "annotations", obj_annotations, "metadata", workload.title, issues)
    md.check_annotation_size(meta, "metadata", workload.title, issues)
    owned_labels = config.preset_labels() | {k for k, _ in config.default_labels}
    owned_annotations = config.preset_annotations() | {k for k, _ in config.default_annotations}

    def owned_label(key: str) -> bool:
        return key in owned_labels or scheduler.reserves_label(key, platform)

    def owned_annotation(key: str) -> bool:
        return key in owned_annotations or scheduler.reserves(key)

    on_pods = scheduler.pod_keys(platform)
    gangs: list[dict[str, Any]] = []
    for unit in workload.units:
        gang = (
            replica_gang.for_unit(unit)
            if replica_gang
            else plan_gang(workload, unit, config, platform)
        )
        issues.extend(gang.issues)
        gangs.extend(gang.objects)
        labels = {**platform.labels, **on_pods.labels, **gang.pod_labels}
        annotations = {**platform.annotations, **on_pods.annotations, **gang.pod_annotations}
        for site in unit.pod_set.sites:
            where, meta = site.path, site.metadata
            md.strip(meta, "labels", owned_label, labels, where, unit.title, issues)
            md.strip(meta, "annotations", owned_annotation, annotations, where, unit.title, issues)
            md.write(meta, "labels", labels, where, unit.title, issues)
            md.write(meta, "annotations", annotations, where, unit.title, issues)
            md.check_annotation_size(meta, where, unit.title, issues)
            for path, spec in site.specs:
                md.set_pod_field(
                    spec, "schedulerName", config.scheduler_name, path, unit.title, issues
                )
                md.set_pod_field(
                    spec, "priorityClassName", platform.priority, path, unit.title, issues
                )
                md.drop_pod_priority(spec, path, unit.title, issues)
        issues.extend(_name_limit(workload, unit, config))
        issues.extend(scheduler.guard(workload, unit, platform))
    return gangs


def _same_object(
    workload: Workload, observed: Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    """`observed` when it is this workload as the cluster holds it (same kind and name;
    a renamed workload is a new object), else None."""
    if observed is None:
        return None
    metadata = observed.get("metadata")
    name = cast(Mapping[str, Any], metadata).get("name") if isinstance(metadata, Mapping) else None
    same = observed.get("kind") == workload.kind.kind and name == workload.name
    return observed if same else None


def _name_limit(workload: Workload, unit: Unit, config: SchedulingConfig) -> list[Issue]:
    """An LWS name (or the one KServe derives) must fit LWS's limit and the scheduler's."""
    pods, scheduler = unit.pod_set, config.scheduler
    if pods.lws_name is None:
        return []
    limit, rule = lws.name_max(pods.replicas), "LWS pod labels"
    if scheduler.lws_name_max is not None and scheduler.lws_name_max <= limit:
        limit, rule = scheduler.lws_name_max, scheduler.lws_name_rule
    if len(pods.lws_name) <= limit:
        return []
    derived = (
        f"the LeaderWorkerSet {pods.lws_name!r} KServe derives from it"
        if workload.kind is LLM_INFERENCE_SERVICE
        else "its name"
    )
    return [
        Issue(
            "metadata.name",
            f"{unit.title}: {derived} has {len(pods.lws_name)} characters; "
            f"{rule} allow at most {limit}",
            Reason.NAME_TOO_LONG,
        )
    ]
