"""Writing platform-owned labels, annotations and pod fields, reporting what they replace."""

from collections.abc import Callable, Collection
from typing import Any, cast

from modelplane.core.issues import Issue, warning
from modelplane.core.labels import ANNOTATIONS_TOTAL_MAX
from modelplane.core.vocabulary import Reason

# The default scheduler's own name means the same as leaving schedulerName unset.
_DEFAULT_SCHEDULER = "default-scheduler"


def _section(meta: dict[str, Any], section: str) -> dict[str, Any]:
    value = meta.get(section)
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _store(meta: dict[str, Any], section: str, values: dict[str, Any]) -> None:
    if values:
        meta[section] = dict(sorted(values.items()))
    else:
        meta.pop(section, None)


def write(
    meta: dict[str, Any],
    section: str,
    owned: dict[str, str],
    where: str,
    title: str,
    issues: list[Issue],
) -> None:
    """Set every platform-owned key, warning where it replaces a different value."""
    if not owned:
        return
    values = dict(_section(meta, section))
    for key, value in sorted(owned.items()):
        existing = values.get(key)
        if existing is not None and existing != value:
            issues.append(
                warning(
                    f"{where}.{section}[{key}]",
                    f"{title}: {key}={existing!r} is owned by the cluster's scheduling "
                    f"conventions; overridden with {value!r}",
                    Reason.PLATFORM_KEY_OVERRIDDEN,
                )
            )
        values[key] = value
    _store(meta, section, values)


def remove(meta: dict[str, Any], section: str, keys: Collection[str]) -> None:
    """Drop `keys` from a metadata section, if there."""
    values = _section(meta, section)
    if any(key in values for key in keys):
        _store(meta, section, {k: v for k, v in values.items() if k not in keys})


def strip(
    meta: dict[str, Any],
    section: str,
    owned: Callable[[str], bool],
    keep: dict[str, str],
    where: str,
    title: str,
    issues: list[Issue],
) -> None:
    """Remove platform-owned keys the platform does not set here, with a Warning."""
    values = dict(_section(meta, section))
    for key in sorted(values):
        if owned(key) and key not in keep:
            issues.append(
                warning(
                    f"{where}.{section}[{key}]",
                    f"{title}: {key} is owned by the cluster's scheduling conventions "
                    "and is not set on pod templates here; removed",
                    Reason.PLATFORM_KEY_OVERRIDDEN,
                )
            )
            del values[key]
    _store(meta, section, values)


def set_pod_field(
    spec: dict[str, Any],
    name: str,
    value: str | dict[str, str] | None,
    where: str,
    title: str,
    issues: list[Issue],
) -> None:
    """Make pod field `name` equal `value` (absent when None), warning on a change."""
    existing = spec.get(name)
    if existing == value:
        return
    if value is None and name == "schedulerName" and existing == _DEFAULT_SCHEDULER:
        return
    if existing is not None:
        outcome = "removed" if value is None else f"overridden with {value!r}"
        issues.append(
            warning(
                f"{where}.{name}",
                f"{title}: {name}={existing!r} is owned by the cluster's scheduling "
                f"conventions; {outcome}",
                Reason.PLATFORM_KEY_OVERRIDDEN,
            )
        )
    if value is None:
        del spec[name]
    else:
        spec[name] = value


def drop_pod_priority(spec: dict[str, Any], where: str, title: str, issues: list[Issue]) -> None:
    """Pods may carry neither an integer priority nor a preemption policy: priority
    admission derives both from the class, and refuses a pod whose values differ."""
    for name in ("preemptionPolicy", "priority"):
        if name in spec:
            issues.append(
                warning(
                    f"{where}.{name}",
                    f"{title}: spec.{name} is set by admission from priorityClassName; removed",
                    Reason.PLATFORM_KEY_OVERRIDDEN,
                )
            )
            del spec[name]


def check_annotation_size(
    meta: dict[str, Any], where: str, title: str, issues: list[Issue]
) -> None:
    values = _section(meta, "annotations")
    total = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in values.items())
    if total > ANNOTATIONS_TOTAL_MAX:
        issues.append(
            Issue(
                f"{where}.annotations",
                f"{title}: annotations total {total} bytes, over the "
                f"{ANNOTATIONS_TOTAL_MAX}-byte limit",
                Reason.INVALID_SCHEDULING_TEMPLATE,
            )
        )
