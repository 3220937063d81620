"""Validate `InferenceCluster.spec.scheduling` into a SchedulingConfig."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final, cast

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

_FIELDS: Final = frozenset(
    {
        "provider",
        "schedulerName",
        "queue",
        "defaultPriority",
        "allowedPriorities",
        "gang",
        "defaultLabels",
        "defaultAnnotations",
        "kai",
        "kueue",
        "volcano",
    }
)
_SUB_BLOCKS: Final = {"kai": pv.KAI, "kueue": pv.KUEUE, "volcano": pv.VOLCANO}


class _Parser:
    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def error(self, path: str, message: str, reason: str = Reason.INVALID_SCHEDULING) -> None:
        self.issues.append(Issue(path, message, reason))

    def warn(self, path: str, message: str) -> None:
        self.issues.append(warning(path, message, Reason.SCHEDULING_FIELD_IGNORED))

    def mapping(self, value: object, path: str) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.error(path, "must be an object")
            return None
        return cast(Mapping[str, Any], value)

    def unknown(self, block: Mapping[str, Any], known: frozenset[str], path: str) -> None:
        for key in sorted(set(block) - known):
            self.warn(f"{path}.{key}", f"unknown field {key!r} is ignored")

    def string(self, value: object, path: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.error(path, "must be a string")
            return None
        return value

    def boolean(self, value: object, path: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.error(path, "must be true or false")
            return default
        return value

    def names(self, value: object, path: str, what: str) -> tuple[str, ...] | None:
        """A list of object names, sorted and without repeats; None when absent."""
        if value is None:
            return None
        if not isinstance(value, list):
            self.error(path, "must be a list of strings")
            return ()
        out: set[str] = set()
        for i, item in enumerate(cast(list[object], value)):
            if not isinstance(item, str) or not is_dns_subdomain(item):
                self.error(f"{path}[{i}]", f"{item!r} is not a valid {what} name")
                continue
            out.add(item)
        return tuple(sorted(out))

    def template(self, value: str, path: str) -> Template | None:
        try:
            return parse_template(value)
        except TemplateError as exc:
            self.error(path, str(exc), Reason.INVALID_SCHEDULING_TEMPLATE)
            return None

    def metadata(self, value: object, path: str, labels: bool) -> dict[str, Template]:
        block = self.mapping(value, path)
        out: dict[str, Template] = {}
        for key, raw in sorted((block or {}).items()):
            where = f"{path}[{key}]"
            problem = key_error(key)
            if problem is not None:
                self.error(where, f"invalid key {key!r}: {problem}")
                continue
            if _modelplane_owned(key):
                self.error(where, f"keys under {GROUP}/ belong to Modelplane itself")
                continue
            text = self.string(raw, where)
            if text is None:
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


def parse_scheduling(spec: Mapping[str, Any] | None) -> tuple[SchedulingConfig, list[Issue]]:
    """Parse and validate an InferenceCluster's `spec.scheduling` block.

    Pass the block itself (`cluster["spec"].get("scheduling")`); None means the
    cluster has none. Never raises: every problem is an Issue, and errors are
    also kept on the returned config so `apply_conventions` refuses to render
    with it.
    """
    p = _Parser()
    block = p.mapping(spec, ROOT)
    if block is None:
        return _finish(SchedulingConfig(), p)
    p.unknown(block, _FIELDS, ROOT)

    provider = _provider(p, block.get("provider"))
    scheduler_name = p.string(block.get("schedulerName"), f"{ROOT}.schedulerName")
    if scheduler_name is not None and not is_dns_subdomain(scheduler_name):
        p.error(f"{ROOT}.schedulerName", f"{scheduler_name!r} is not a valid scheduler name")
        scheduler_name = None
    kai, kueue, volcano = _sub_blocks(p, block, provider)
    allowed = p.names(block.get("allowedPriorities"), f"{ROOT}.allowedPriorities", "PriorityClass")
    gang = p.mapping(block.get("gang"), f"{ROOT}.gang") or {}
    p.unknown(gang, frozenset({"enabled"}), f"{ROOT}.gang")
    config = SchedulingConfig(
        provider=provider,
        scheduler_name=scheduler_name or pv.DEFAULT_SCHEDULER_NAMES[provider],
        queue=_queue(p, block.get("queue"), provider),
        default_priority=_default_priority(p, block.get("defaultPriority"), allowed),
        allowed_priorities=allowed or (),
        gang_enabled=p.boolean(gang.get("enabled"), f"{ROOT}.gang.enabled", True),
        default_labels=tuple(
            p.metadata(block.get("defaultLabels"), f"{ROOT}.defaultLabels", True).items()
        ),
        default_annotations=tuple(
            p.metadata(block.get("defaultAnnotations"), f"{ROOT}.defaultAnnotations", False).items()
        ),
        kai=kai,
        kueue=kueue,
        volcano=volcano,
    )
    if provider == pv.DEFAULT and gang.get("enabled") is True:
        p.warn(
            f"{ROOT}.gang.enabled",
            "the default scheduler has no gang scheduling; multi-pod workers start pod by pod",
        )
    _conflicts(p, config)
    return _finish(config, p)


def _finish(config: SchedulingConfig, p: _Parser) -> tuple[SchedulingConfig, list[Issue]]:
    errors = tuple(errors_of(p.issues))
    if errors:
        config = replace(config, errors=errors)
    return config, p.issues


def _provider(p: _Parser, value: object) -> pv.Provider:
    if value is None:
        return "Default"
    if value not in pv.PROVIDERS:
        p.error(f"{ROOT}.provider", f"{value!r} is not one of {', '.join(pv.PROVIDERS)}")
        return "Default"
    return value


def _queue(p: _Parser, value: object, provider: str) -> Template | None:
    path = f"{ROOT}.queue"
    text = p.string(value, path)
    if text is None:
        return None
    if provider in (pv.DEFAULT, pv.COSCHEDULING):
        p.warn(path, f"{provider} has no queues; the queue is ignored")
        return None
    parsed = p.template(text, path)
    if parsed is not None and parsed.is_constant and (problem := queue_error(provider, text)):
        p.error(path, problem, Reason.INVALID_SCHEDULING_TEMPLATE)
        return None
    return parsed


def _default_priority(p: _Parser, value: object, allowed: tuple[str, ...] | None) -> str | None:
    path = f"{ROOT}.defaultPriority"
    name = p.string(value, path)
    if not name:
        return None
    if (problem := priority_error(name)) is not None:
        p.error(path, problem)
        return None
    if allowed and name not in allowed:
        p.error(path, f"default priority {name!r} is not in allowedPriorities")
        return None
    return name


def _sub_blocks(
    p: _Parser, block: Mapping[str, Any], provider: str
) -> tuple[KAISettings, KueueSettings, VolcanoSettings]:
    for name, owner in _SUB_BLOCKS.items():
        if block.get(name) is not None and provider != owner:
            p.warn(f"{ROOT}.{name}", f"only read when provider is {owner}; ignored for {provider}")
    kai, kueue, volcano = KAISettings(), KueueSettings(), VolcanoSettings()
    if provider == pv.KAI and (raw := p.mapping(block.get("kai"), f"{ROOT}.kai")) is not None:
        kai = _kai(p, raw)
    if provider == pv.KUEUE and (raw := p.mapping(block.get("kueue"), f"{ROOT}.kueue")) is not None:
        path = f"{ROOT}.kueue"
        p.unknown(raw, frozenset({"workloadPriorityClasses"}), path)
        names = p.names(
            raw.get("workloadPriorityClasses"),
            f"{path}.workloadPriorityClasses",
            "WorkloadPriorityClass",
        )
        kueue = KueueSettings(workload_priority_classes=frozenset(names or ()))
    if (
        provider == pv.VOLCANO
        and (raw := p.mapping(block.get("volcano"), f"{ROOT}.volcano")) is not None
    ):
        path = f"{ROOT}.volcano"
        p.unknown(raw, frozenset({"lwsGangScheduling"}), path)
        volcano = VolcanoSettings(
            lws_gang_scheduling=p.boolean(
                raw.get("lwsGangScheduling"), f"{path}.lwsGangScheduling", True
            )
        )
    return kai, kueue, volcano


def _kai(p: _Parser, raw: Mapping[str, Any]) -> KAISettings:
    path = f"{ROOT}.kai"
    p.unknown(
        raw,
        frozenset({"queueLabelKey", "queuesWithQuota", "preemptiblePriorities", "podGrouper"}),
        path,
    )
    key = p.string(raw.get("queueLabelKey"), f"{path}.queueLabelKey") or pv.KAI_QUEUE_LABEL
    if (problem := key_error(key)) is not None:
        p.error(f"{path}.queueLabelKey", f"invalid label key {key!r}: {problem}")
        key = pv.KAI_QUEUE_LABEL
    grouper = p.string(raw.get("podGrouper"), f"{path}.podGrouper") or "Automatic"
    if grouper not in pv.KAI_POD_GROUPERS:
        p.error(f"{path}.podGrouper", f"{grouper!r} is not one of {', '.join(pv.KAI_POD_GROUPERS)}")
        grouper = "Automatic"
    quota = p.names(raw.get("queuesWithQuota"), f"{path}.queuesWithQuota", "Queue")
    preemptible = p.names(
        raw.get("preemptiblePriorities"), f"{path}.preemptiblePriorities", "PriorityClass"
    )
    return KAISettings(
        queue_label_key=key,
        queues_with_quota=None if quota is None else frozenset(quota),
        preemptible_priorities=frozenset(preemptible or ()),
        pod_grouper=grouper,
    )


def _conflicts(p: _Parser, config: SchedulingConfig) -> None:
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
                p.error(path, f"{key} joins pods to a gang; Modelplane manages it (gang.enabled)")
            elif key in preset:
                p.error(path, f"{key} is set by the {provider} preset; it cannot also be a default")
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
                p.warn(f"{ROOT}.{where}[{key}]", f"{provider} reads {key} only as {form}")
    if (
        provider == pv.KAI
        and pv.KAI_LEGACY_QUEUE_LABEL in labels
        and config.kai.queue_label_key != pv.KAI_LEGACY_QUEUE_LABEL
    ):
        p.warn(
            f"{ROOT}.defaultLabels[{pv.KAI_LEGACY_QUEUE_LABEL}]",
            f"KAI v0.6+ reads the queue from {config.kai.queue_label_key}, not "
            f"{pv.KAI_LEGACY_QUEUE_LABEL}; use spec.scheduling.queue, or set "
            f"kai.queueLabelKey if the cluster pins the legacy key",
        )
