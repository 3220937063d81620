"""Validate an InferenceCluster's typed `spec.scheduling` block into a SchedulingConfig.

The generated model already holds what the XRD's schema says (types, enums,
name patterns, lengths); the API server prunes unknown fields. What the schema
cannot say is checked here: templates, label keys and rendered values, keys only
Modelplane or a scheduler may set, the rules the XRD states in CEL (system
priorities, defaultPriority among allowedPriorities), and settings that do
nothing for the chosen provider.
"""

from dataclasses import replace

from modelplane_models.inference_cluster import Api, Preemption, Scheduling

from modelplane.conventions.config import SchedulingConfig, priority_error
from modelplane.conventions.schedulers import ROOT, SCHEDULERS, Default, Scheduler
from modelplane.conventions.template import Template, TemplateError, never_valid, parse_template
from modelplane.conventions.workload_api import FIELD as WORKLOAD_FIELD
from modelplane.conventions.workload_api import served_version, unavailable
from modelplane.core.issues import Issue, warning
from modelplane.core.issues import errors as errors_of
from modelplane.core.labels import key_error, value_error
from modelplane.core.vocabulary import GROUP, Reason


class _Checks:
    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def error(self, path: str, message: str, reason: str = Reason.INVALID_SCHEDULING) -> None:
        self.issues.append(Issue(path, message, reason))

    def warn(self, path: str, message: str) -> None:
        self.issues.append(warning(path, message, Reason.SCHEDULING_FIELD_IGNORED))

    def template(self, value: str, path: str) -> Template | None:
        try:
            return parse_template(value)
        except TemplateError as exc:
            self.error(path, str(exc), Reason.INVALID_SCHEDULING_TEMPLATE)
            return None

    def metadata(
        self, block: dict[str, str] | None, path: str, labels: bool
    ) -> dict[str, Template]:
        out: dict[str, Template] = {}
        for key, text in sorted((block or {}).items()):
            where = f"{path}[{key}]"
            problem = key_error(key)
            if problem is not None:
                self.error(where, f"invalid key {key!r}: {problem}")
                continue
            if _modelplane_owned(key):
                self.error(where, f"keys under {GROUP}/ belong to Modelplane itself")
                continue
            parsed = self.template(text, where)
            if parsed is None:
                continue
            if labels and (problem := never_valid(parsed, _label_value_error)) is not None:
                self.error(where, problem, Reason.INVALID_SCHEDULING_TEMPLATE)
                continue
            out[key] = parsed
        return out


def _label_value_error(value: str) -> str | None:
    problem = value_error(value)
    return None if problem is None else f"label value {value!r} {problem}"


def _modelplane_owned(key: str) -> bool:
    prefix, slash, _ = key.partition("/")
    return bool(slash) and (prefix == GROUP or prefix.endswith(f".{GROUP}"))


def parse_scheduling(
    block: Scheduling | None, kubernetes_version: str | None = None
) -> tuple[SchedulingConfig, list[Issue]]:
    """Validate an InferenceCluster's `spec.scheduling` block, as its model holds it.

    The one reader of the block: what composes a replica's workloads and the fleet
    scheduler's adapter (`modelplane.scheduling.adapt.fleet`) both take what they use
    from the config it returns.
    None means the cluster has none. `kubernetes_version` is the version the cluster
    runs (`modelplane.provisioning.kubernetes_version`; None: unknown, so no Workload
    API version is served).
    Never raises: every problem is an Issue, and errors are also kept on the
    returned config so `apply_conventions` refuses to render with it.
    """
    c = _Checks()
    if block is None:
        return SchedulingConfig(), c.issues
    scheduler = _scheduler(c, block)
    allowed = tuple(sorted({p.root for p in block.allowedPriorities or ()}))
    queue = _queue(c, block.queue, scheduler)
    default, refused = _default_priority(block.defaultPriority, allowed)
    if refused is not None:
        c.issues.append(refused)
    config = SchedulingConfig(
        scheduler=scheduler,
        scheduler_name=block.schedulerName or scheduler.default_scheduler_name,
        queue=queue,
        default_priority=default,
        refused_default=refused,
        allowed_priorities=allowed,
        # Bad scheduler settings are reported by `_scheduler`; here they add nothing.
        over_quota_priorities=frozenset({p.root for p in block.overQuotaPriorities or ()})
        | scheduler.over_quota_priorities(),
        preemption=block.preemption == Preemption.LOWER_PRIORITY,
        gang_enabled=block.gang is None or block.gang.enabled is not False,
        default_labels=tuple(
            c.metadata(block.defaultLabels, f"{ROOT}.defaultLabels", True).items()
        ),
        default_annotations=tuple(
            c.metadata(block.defaultAnnotations, f"{ROOT}.defaultAnnotations", False).items()
        ),
    )
    workload_api = _workload_api(c, block, scheduler, config.gang_enabled, kubernetes_version)
    if workload_api is not None:
        config = replace(config, workload_api=workload_api)
    elif scheduler.no_gangs and block.gang is not None and block.gang.enabled is True:
        c.warn(f"{ROOT}.gang.enabled", scheduler.no_gangs)
    _conflicts(c, config)
    errors = tuple(errors_of(c.issues))
    return (replace(config, errors=errors) if errors else config), c.issues


def _workload_api(
    c: _Checks,
    block: Scheduling,
    scheduler: Scheduler,
    enabled: bool,
    kubernetes_version: str | None,
) -> str | None:
    """The Workload API version gangs are composed in, warning where gang.api: Workload
    cannot be honoured (nothing that runs changes: the pods just are not ganged)."""
    if block.gang is None or block.gang.api != Api.WORKLOAD:
        return None
    if not enabled:
        c.warn(WORKLOAD_FIELD, "gang.enabled is false; no Workload is composed")
        return None
    if scheduler.name != Default.name:
        c.warn(
            WORKLOAD_FIELD,
            f"only the default scheduler reads the Workload API; {scheduler.name} gangs "
            "with its own objects",
        )
        return None
    version = served_version(kubernetes_version) if kubernetes_version else None
    if version is None:
        c.issues.append(
            warning(
                WORKLOAD_FIELD,
                unavailable(kubernetes_version or "(unknown)"),
                Reason.GANG_API_UNAVAILABLE,
            )
        )
    return version


def _scheduler(c: _Checks, block: Scheduling) -> Scheduler:
    """The chosen scheduler with its settings; a warning for every other's sub-block."""
    # str(): an unvalidated schema default is the plain string, not the enum member.
    chosen = SCHEDULERS[str(block.provider or Default.name)]
    for other in SCHEDULERS.values():
        field_name = other.settings_field
        if other is chosen or field_name is None or getattr(block, field_name) is None:
            continue
        c.warn(
            f"{ROOT}.{field_name}",
            f"only read when provider is {other.name}; ignored for {chosen.name}",
        )
    return chosen.from_block(block, c.issues)


def _queue(c: _Checks, text: str | None, scheduler: Scheduler) -> Template | None:
    path = f"{ROOT}.queue"
    if text is None:
        return None
    if not scheduler.has_queues:
        c.warn(path, f"{scheduler.name} has no queues; the queue is ignored")
        return None
    parsed = c.template(text, path)
    if parsed is not None and (problem := never_valid(parsed, scheduler.queue_error)):
        c.error(path, problem, Reason.INVALID_SCHEDULING_TEMPLATE)
        return None
    return parsed


def _default_priority(
    name: str | None, allowed: tuple[str, ...]
) -> tuple[str | None, Issue | None]:
    """The block's default priority, or None and why it is refused."""
    if not name:
        return None, None
    problem = priority_error(name)
    if problem is None and allowed and name not in allowed:
        problem = f"default priority {name!r} is not in allowedPriorities"
    if problem is not None:
        return None, Issue(f"{ROOT}.defaultPriority", problem, Reason.INVALID_SCHEDULING)
    return name, None


def _conflicts(c: _Checks, config: SchedulingConfig) -> None:
    """Keys that two parts of the block, or the block and the scheduler, both claim."""
    scheduler = config.scheduler
    labels = dict(config.default_labels)
    annotations = dict(config.default_annotations)
    for kind, keys, preset in (
        ("defaultLabels", labels, config.preset_labels()),
        ("defaultAnnotations", annotations, config.preset_annotations()),
    ):
        for key in sorted(keys):
            path = f"{ROOT}.{kind}[{key}]"
            if key in scheduler.gang_keys:
                c.error(path, f"{key} joins pods to a gang; Modelplane manages it (gang.enabled)")
            elif key in preset:
                c.error(
                    path,
                    f"{key} is set by the {scheduler.name} preset; it cannot also be a default",
                )
    c.issues.extend(scheduler.misplaced(labels, annotations))
