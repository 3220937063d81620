"""Hand a replica's rendered workloads to the cluster's in-cluster scheduler."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from modelplane.conventions import metadata as md
from modelplane.conventions import providers as pv
from modelplane.conventions.config import ROOT, SchedulingConfig, priority_error, queue_error
from modelplane.conventions.gang import plan_gang
from modelplane.conventions.kai import priority_values, quota_issue
from modelplane.conventions.template import Template, TemplateContext, context_values
from modelplane.conventions.workload import Unit, Workload, child, classify
from modelplane.core.issues import Issue, has_errors, unique, warning
from modelplane.core.kinds import LEADER_WORKER_SET, LLM_INFERENCE_SERVICE
from modelplane.core.kinds import leader_worker_set as lws
from modelplane.core.labels import value_error
from modelplane.core.priority import priority_allowed, resolve_priority
from modelplane.core.vocabulary import Reason


@dataclass
class ConventionResult:
    workloads: list[dict[str, Any]]
    extra: list[dict[str, Any]]
    issues: list[Issue]

    @property
    def ok(self) -> bool:
        """No Error: the workloads may be composed as returned."""
        return not has_errors(self.issues)


@dataclass
class _Platform:
    """Everything the cluster's block resolves to for this one replica."""

    config: SchedulingConfig
    priority: str | None
    queue: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    class_values: dict[str, int]
    issues: list[Issue] = field(default_factory=list[Issue])


def apply_conventions(
    workloads: Sequence[Mapping[str, Any]],
    config: SchedulingConfig,
    context: TemplateContext,
    *,
    priority_classes: Sequence[Mapping[str, Any]] = (),
) -> ConventionResult:
    """Apply the cluster's scheduling conventions to one ModelReplica's workloads.

    `context.priority` is the replica's own priority (None when it asked for
    none); it falls back to the cluster's defaultPriority. `priority_classes` are
    PriorityClass objects observed on the cluster, used only to tell whether a
    priority is preemptible under KAI. Never raises; inputs are not modified.
    """
    issues: list[Issue] = list(config.errors)
    resolved = resolve_priority(context.priority, config.default_priority)
    priority = _priority(resolved, config, issues)
    values = context_values(context, priority)
    platform = _Platform(
        config=config,
        priority=priority,
        queue=_render_queue(config, values, issues),
        labels=_render(config.default_labels, values, "defaultLabels", issues),
        annotations=_render(config.default_annotations, values, "defaultAnnotations", issues),
        class_values=priority_values(priority_classes),
        issues=issues,
    )
    out: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    for manifest in workloads:
        doc = cast(dict[str, Any], _plain(manifest))
        workload = classify(doc)
        if workload is not None:
            extra.extend(_apply(workload, platform))
        out.append(doc)
    extra.sort(key=lambda o: (o["apiVersion"], o["kind"], o["metadata"]["name"]))
    return ConventionResult(workloads=out, extra=extra, issues=unique(issues))


def _plain(value: object) -> object:
    """A deep copy made of plain dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in cast(Mapping[Any, Any], value).items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in cast(Sequence[Any], value)]
    return value


def _priority(resolved: str | None, config: SchedulingConfig, issues: list[Issue]) -> str | None:
    if resolved is None:
        return None
    problem = priority_error(resolved)
    if problem is None and not priority_allowed(resolved, list(config.allowed_priorities)):
        problem = (
            f"priority {resolved!r} is not in this cluster's allowedPriorities "
            f"({', '.join(config.allowed_priorities)})"
        )
    if (
        problem is None
        and config.provider == pv.KUEUE
        and resolved in config.kueue.workload_priority_classes
        and (label_problem := value_error(resolved)) is not None
    ):
        problem = f"{resolved!r} as label {pv.KUEUE_PRIORITY_LABEL} {label_problem}"
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
    problem = queue_error(config.provider, rendered)
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


def _object_keys(workload: Workload, p: _Platform) -> tuple[dict[str, str], dict[str, str]]:
    """Labels and annotations for the workload object itself."""
    labels, annotations = dict(p.labels), dict(p.annotations)
    provider, queue = p.config.provider, p.queue
    if provider == pv.KAI and queue:
        labels[p.config.kai.queue_label_key] = queue
    elif provider == pv.KUEUE:
        if queue:
            labels[pv.KUEUE_QUEUE_LABEL] = queue
        if p.priority and p.priority in p.config.kueue.workload_priority_classes:
            labels[pv.KUEUE_PRIORITY_LABEL] = p.priority
    elif provider == pv.VOLCANO and queue and workload.kind is LEADER_WORKER_SET:
        annotations[pv.VOLCANO_QUEUE_ANNOTATION] = queue
    return labels, annotations


def _pod_keys(p: _Platform) -> tuple[dict[str, str], dict[str, str]]:
    """Labels and annotations for every pod template, before any gang keys."""
    labels, annotations = dict(p.labels), dict(p.annotations)
    if p.config.provider == pv.KAI and p.queue:
        labels[p.config.kai.queue_label_key] = p.queue
    elif p.config.provider == pv.VOLCANO and p.queue:
        annotations[pv.VOLCANO_QUEUE_ANNOTATION] = p.queue
    return labels, annotations


def _apply(workload: Workload, p: _Platform) -> list[dict[str, Any]]:
    config, issues = p.config, p.issues
    meta = child(workload.manifest, "metadata")
    obj_labels, obj_annotations = _object_keys(workload, p)
    md.write(meta, "labels", obj_labels, "metadata", workload.title, issues)
    md.write(meta, "annotations", obj_annotations, "metadata", workload.title, issues)
    md.check_annotation_size(meta, "metadata", workload.title, issues)
    owned_labels = config.preset_labels() | {k for k, _ in config.default_labels}
    owned_annotations = config.preset_annotations() | {k for k, _ in config.default_annotations}

    def owned_label(key: str) -> bool:
        return key in owned_labels or pv.is_reserved(config.provider, key)

    def owned_annotation(key: str) -> bool:
        return key in owned_annotations or pv.is_reserved(config.provider, key)

    gang_queue = _kai_queue(p) if config.provider == pv.KAI else p.queue
    extra: list[dict[str, Any]] = []
    for unit in workload.units:
        gang = plan_gang(workload, unit, config, gang_queue, p.priority, p.labels)
        issues.extend(gang.issues)
        extra.extend(gang.objects)
        labels, annotations = _pod_keys(p)
        labels.update(gang.pod_labels)
        annotations.update(gang.pod_annotations)
        for site in unit.pod_set.sites:
            where, meta = site.path, site.metadata
            md.strip(meta, "labels", owned_label, labels, where, unit.title, issues)
            md.strip(meta, "annotations", owned_annotation, annotations, where, unit.title, issues)
            md.write(meta, "labels", labels, where, unit.title, issues)
            md.write(meta, "annotations", annotations, where, unit.title, issues)
            md.check_annotation_size(meta, where, unit.title, issues)
            for path, spec in site.specs:
                _pod_fields(spec, path, unit.title, p)
        _guard(workload, unit, p)
    return extra


def _pod_fields(spec: dict[str, Any], path: str, title: str, p: _Platform) -> None:
    issues = p.issues
    md.set_pod_field(spec, "schedulerName", p.config.scheduler_name, path, title, issues)
    md.set_pod_field(spec, "priorityClassName", p.priority, path, title, issues)
    md.drop_pod_priority(spec, path, title, issues)


def _kai_queue(p: _Platform) -> str:
    """The queue KAI's podgrouper will resolve for these pods."""
    return p.queue or p.labels.get(p.config.kai.queue_label_key) or pv.KAI_DEFAULT_QUEUE


def _guard(workload: Workload, unit: Unit, p: _Platform) -> None:
    config, issues = p.config, p.issues
    pods = unit.pod_set
    if pods.lws_name is not None:
        kueue = config.provider == pv.KUEUE
        limit = lws.name_max(pods.replicas)
        if kueue:
            limit = min(limit, pv.KUEUE_LWS_NAME_MAX)
        if len(pods.lws_name) > limit:
            derived = (
                f"the LeaderWorkerSet {pods.lws_name!r} KServe derives from it"
                if workload.kind is LLM_INFERENCE_SERVICE
                else "its name"
            )
            rule = (
                "Kueue's pod-group-name label"
                if kueue and limit == pv.KUEUE_LWS_NAME_MAX
                else "LWS pod labels"
            )
            issues.append(
                Issue(
                    "metadata.name",
                    f"{unit.title}: {derived} has {len(pods.lws_name)} characters; "
                    f"{rule} allow at most {limit}",
                    Reason.NAME_TOO_LONG,
                )
            )
    if config.provider == pv.KAI:
        issue = quota_issue(unit, _kai_queue(p), p.priority, config, p.class_values, p.labels)
        if issue is not None:
            issues.append(issue)
    if (
        config.provider == pv.VOLCANO
        and workload.kind is LLM_INFERENCE_SERVICE
        and pods.owner is LEADER_WORKER_SET
        and config.volcano.lws_gang_scheduling
        and p.queue
        and p.queue != pv.VOLCANO_DEFAULT_QUEUE
    ):
        issues.append(
            warning(
                f"{ROOT}.queue",
                f"{unit.title}: the LWS Volcano provider reads the queue only from the "
                f"LeaderWorkerSet's {pv.VOLCANO_QUEUE_ANNOTATION} annotation, which KServe "
                f"does not copy from an LLMInferenceService, so its PodGroups go to queue "
                f"'{pv.VOLCANO_DEFAULT_QUEUE}', not {p.queue!r}; enable Volcano's namespace "
                "queue policy, or set volcano.lwsGangScheduling: false",
                Reason.QUEUE_NOT_EXPRESSIBLE,
            )
        )
