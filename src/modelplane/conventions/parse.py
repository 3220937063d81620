"""Validate an InferenceCluster's typed `spec.scheduling` block into a SchedulingConfig.

The generated model already holds what the XRD's schema says (types, enums,
name patterns, lengths); the API server prunes unknown fields. What the schema
cannot say is checked here: templates, label keys and rendered values, keys only
Modelplane or a scheduler may set, the rules the XRD states in CEL (system
priorities, defaultPriority among allowedPriorities), and settings that do
nothing for the chosen provider.
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import Final, cast

from modelplane_models.inference_cluster import Kai, Scheduling
from pydantic import RootModel

from modelplane.conventions import providers as pv
from modelplane.conventions.config import (
    ROOT,
    KAISettings,
    KueueSettings,
    SchedulingConfig,
    VolcanoSettings,
    priority_error,
    queue_error,
)
from modelplane.conventions.template import Template, TemplateError, parse_template
from modelplane.core.issues import Issue, warning
from modelplane.core.issues import errors as errors_of
from modelplane.core.labels import key_error, value_error
from modelplane.core.naming import is_dns_subdomain
from modelplane.core.vocabulary import GROUP, Reason

_SUB_BLOCKS: Final = {"kai": pv.KAI, "kueue": pv.KUEUE, "volcano": pv.VOLCANO}


class _Checks:
    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def error(self, path: str, message: str, reason: str = Reason.INVALID_SCHEDULING) -> None:
        self.issues.append(Issue(path, message, reason))

    def warn(self, path: str, message: str) -> None:
        self.issues.append(warning(path, message, Reason.SCHEDULING_FIELD_IGNORED))

    def names(
        self, value: Sequence[RootModel[str]] | None, path: str, what: str
    ) -> tuple[str, ...] | None:
        """A list of object names, sorted and without repeats; None when absent."""
        if value is None:
            return None
        out: set[str] = set()
        for i, item in enumerate(value):
            if not is_dns_subdomain(item.root):
                self.error(f"{path}[{i}]", f"{item.root!r} is not a valid {what} name")
                continue
            out.add(item.root)
        return tuple(sorted(out))

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
            if labels and parsed.is_constant and (problem := value_error(text)) is not None:
                self.error(
                    where, f"label value {text!r} {problem}", Reason.INVALID_SCHEDULING_TEMPLATE
                )
                continue
            out[key] = parsed
        return out


def _modelplane_owned(key: str) -> bool:
    prefix, slash, _ = key.partition("/")
    return bool(slash) and (prefix == GROUP or prefix.endswith(f".{GROUP}"))


def parse_scheduling(block: Scheduling | None) -> tuple[SchedulingConfig, list[Issue]]:
    """Validate an InferenceCluster's `spec.scheduling` block, as its model holds it.

    None means the cluster has none. Never raises: every problem is an Issue, and
    errors are also kept on the returned config so `apply_conventions` refuses to
    render with it.
    """
    c = _Checks()
    if block is None:
        return SchedulingConfig(), c.issues
    # str(): an unvalidated schema default is the plain string, not the enum member.
    provider = cast(pv.Provider, str(block.provider or pv.DEFAULT))
    kai, kueue, volcano = _sub_blocks(c, block, provider)
    allowed = tuple(sorted({p.root for p in block.allowedPriorities or ()}))
    config = SchedulingConfig(
        provider=provider,
        scheduler_name=block.schedulerName or pv.DEFAULT_SCHEDULER_NAMES[provider],
        queue=_queue(c, block.queue, provider),
        default_priority=_default_priority(c, block.defaultPriority, allowed),
        allowed_priorities=allowed,
        gang_enabled=block.gang is None or block.gang.enabled is not False,
        default_labels=tuple(
            c.metadata(block.defaultLabels, f"{ROOT}.defaultLabels", True).items()
        ),
        default_annotations=tuple(
            c.metadata(block.defaultAnnotations, f"{ROOT}.defaultAnnotations", False).items()
        ),
        kai=kai,
        kueue=kueue,
        volcano=volcano,
    )
    if provider == pv.DEFAULT and block.gang is not None and block.gang.enabled is True:
        c.warn(
            f"{ROOT}.gang.enabled",
            "the default scheduler has no gang scheduling; multi-pod workers start pod by pod",
        )
    _conflicts(c, config)
    errors = tuple(errors_of(c.issues))
    return (replace(config, errors=errors) if errors else config), c.issues


def _queue(c: _Checks, text: str | None, provider: str) -> Template | None:
    path = f"{ROOT}.queue"
    if text is None:
        return None
    if provider in (pv.DEFAULT, pv.COSCHEDULING):
        c.warn(path, f"{provider} has no queues; the queue is ignored")
        return None
    parsed = c.template(text, path)
    if parsed is not None and parsed.is_constant and (problem := queue_error(provider, text)):
        c.error(path, problem, Reason.INVALID_SCHEDULING_TEMPLATE)
        return None
    return parsed


def _default_priority(c: _Checks, name: str | None, allowed: tuple[str, ...]) -> str | None:
    path = f"{ROOT}.defaultPriority"
    if not name:
        return None
    if (problem := priority_error(name)) is not None:
        c.error(path, problem)
        return None
    if allowed and name not in allowed:
        c.error(path, f"default priority {name!r} is not in allowedPriorities")
        return None
    return name


def _sub_blocks(
    c: _Checks, block: Scheduling, provider: str
) -> tuple[KAISettings, KueueSettings, VolcanoSettings]:
    present = {"kai": block.kai, "kueue": block.kueue, "volcano": block.volcano}
    for name, owner in _SUB_BLOCKS.items():
        if present[name] is not None and provider != owner:
            c.warn(f"{ROOT}.{name}", f"only read when provider is {owner}; ignored for {provider}")
    kai, kueue, volcano = KAISettings(), KueueSettings(), VolcanoSettings()
    if provider == pv.KAI and block.kai is not None:
        kai = _kai(c, block.kai)
    if provider == pv.KUEUE and block.kueue is not None:
        path = f"{ROOT}.kueue.workloadPriorityClasses"
        names = c.names(block.kueue.workloadPriorityClasses, path, "WorkloadPriorityClass")
        kueue = KueueSettings(workload_priority_classes=frozenset(names or ()))
    if provider == pv.VOLCANO and block.volcano is not None:
        volcano = VolcanoSettings(lws_gang_scheduling=block.volcano.lwsGangScheduling is not False)
    return kai, kueue, volcano


def _kai(c: _Checks, raw: Kai) -> KAISettings:
    path = f"{ROOT}.kai"
    key = raw.queueLabelKey or pv.KAI_QUEUE_LABEL
    if (problem := key_error(key)) is not None:
        c.error(f"{path}.queueLabelKey", f"invalid label key {key!r}: {problem}")
        key = pv.KAI_QUEUE_LABEL
    quota = c.names(raw.queuesWithQuota, f"{path}.queuesWithQuota", "Queue")
    preemptible = c.names(
        raw.preemptiblePriorities, f"{path}.preemptiblePriorities", "PriorityClass"
    )
    return KAISettings(
        queue_label_key=key,
        queues_with_quota=None if quota is None else frozenset(quota),
        preemptible_priorities=frozenset(preemptible or ()),
        pod_grouper=str(raw.podGrouper or "Automatic"),
    )


def _conflicts(c: _Checks, config: SchedulingConfig) -> None:
    """Keys that two parts of the block, or the block and the scheduler, both claim."""
    provider = config.provider
    labels = dict(config.default_labels)
    annotations = dict(config.default_annotations)
    for kind, keys, preset in (
        ("defaultLabels", labels, config.preset_labels()),
        ("defaultAnnotations", annotations, config.preset_annotations()),
    ):
        for key in sorted(keys):
            path = f"{ROOT}.{kind}[{key}]"
            if key in pv.GANG_KEYS[provider]:
                c.error(path, f"{key} joins pods to a gang; Modelplane manages it (gang.enabled)")
            elif key in preset:
                c.error(path, f"{key} is set by the {provider} preset; it cannot also be a default")
    wrong_place = {
        pv.KAI: (annotations, (config.kai.queue_label_key,), "a label"),
        pv.KUEUE: (annotations, (pv.KUEUE_QUEUE_LABEL, pv.KUEUE_PRIORITY_LABEL), "a label"),
        pv.VOLCANO: (labels, (pv.VOLCANO_QUEUE_ANNOTATION,), "an annotation"),
    }.get(provider)
    if wrong_place is not None:
        present, keys, form = wrong_place
        where = "defaultAnnotations" if present is annotations else "defaultLabels"
        for key in keys:
            if key in present:
                c.warn(f"{ROOT}.{where}[{key}]", f"{provider} reads {key} only as {form}")
    if (
        provider == pv.KAI
        and pv.KAI_LEGACY_QUEUE_LABEL in labels
        and config.kai.queue_label_key != pv.KAI_LEGACY_QUEUE_LABEL
    ):
        c.warn(
            f"{ROOT}.defaultLabels[{pv.KAI_LEGACY_QUEUE_LABEL}]",
            f"KAI v0.6+ reads the queue from {config.kai.queue_label_key}, not "
            f"{pv.KAI_LEGACY_QUEUE_LABEL}; use spec.scheduling.queue, or set "
            f"kai.queueLabelKey if the cluster pins the legacy key",
        )
