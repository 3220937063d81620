"""The entries of a pod spec that must be unique, and the check of them.

A team's pod spec keeps fields the XRD does not know, and the XRD refuses none of
these repeats (volumes and init containers are not even in its schema, so no CEL
rule of it can see them): two entries with the same key pass admission. They are
refused only later, on the workload cluster: the API server refuses a pod (or a
Deployment's, LeaderWorkerSet's or KServe LLMInferenceService's template) with two
containers of one name, two volumes of one name, two ports of one name in a
container, or two volume mounts at one path. A container's `env` by name and its
`ports` by port and protocol are keyed lists in the LeaderWorkerSet and
LLMInferenceService schemas, which refuse a repeat; a Deployment takes one with a
warning and its pods keep the last. Since the same template may land on any of them
(a multi-node or KServe cluster, or a single-node Native one), those repeats are
refused wherever the replica lands. Before, each replica's workload failed to apply,
or applied and never started a pod, with nothing on the ModelDeployment naming the
field.

`key_issues` names the first repeat of each list where the deployment's and the
replica's roles are read (`template_size.template_issues`), so the template is
refused before any replica carries it.
"""

from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

from modelplane.core.issues import Issue

# Kubernetes' default protocol of a container port: a port without one is keyed as TCP.
_DEFAULT_PROTOCOL = "TCP"
# Container names are unique across both lists (Kubernetes validates them together).
_CONTAINER_LISTS = ("initContainers", "containers")

Key = Callable[[Mapping[str, Any]], str | None]


def key_issues(spec: object, path: str) -> list[Issue]:
    """The repeated entries of the pod spec at `path`: container names across
    `initContainers` and `containers`, volume names, and in each container its env
    names, port names, ports (number and protocol) and volume mount paths. Each issue
    names the later entry and the earlier one it repeats. Entries that are not
    objects, and keys that are absent, are left to the checks that read them."""
    if not isinstance(spec, Mapping):
        return []
    pod = cast(Mapping[str, Any], spec)
    issues: list[Issue] = []
    containers = [
        (f"{path}.{section}[{i}]", container)
        for section in _CONTAINER_LISTS
        for i, container in _entries(pod.get(section))
    ]
    issues.extend(_repeats(containers, "name", "container name", _field("name"), _REFUSED))
    volumes = [(f"{path}.volumes[{i}]", volume) for i, volume in _entries(pod.get("volumes"))]
    issues.extend(_repeats(volumes, "name", "volume name", _field("name"), _REFUSED))
    for where, container in containers:
        env = [(f"{where}.env[{i}]", e) for i, e in _entries(container.get("env"))]
        issues.extend(_repeats(env, "name", "env name", _field("name"), _KEYED))
        ports = [(f"{where}.ports[{i}]", p) for i, p in _entries(container.get("ports"))]
        issues.extend(_repeats(ports, "name", "port name", _field("name"), _REFUSED))
        issues.extend(_repeats(ports, "containerPort", "port", _port, _KEYED))
        mounts = [
            (f"{where}.volumeMounts[{i}]", m) for i, m in _entries(container.get("volumeMounts"))
        ]
        issues.extend(_repeats(mounts, "mountPath", "mount path", _field("mountPath"), _REFUSED))
    return issues


# Why a repeat is refused: every kind's pod validation refuses it, or the keyed lists
# of the LeaderWorkerSet and LLMInferenceService schemas do (a Deployment keeps the last).
_REFUSED = "the workload cluster's API server refuses a pod template that repeats it"
_KEYED = (
    "LeaderWorkerSet and LLMInferenceService refuse a template that repeats it and a "
    "Deployment's pods keep only the last, so it is refused wherever the replica lands"
)


def _entries(value: object) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if not isinstance(value, list):
        return
    for i, entry in enumerate(cast(list[Any], value)):
        if isinstance(entry, Mapping):
            yield i, cast(Mapping[str, Any], entry)


def _field(name: str) -> Key:
    def key(entry: Mapping[str, Any]) -> str | None:
        value = entry.get(name)
        # An empty name is Kubernetes' "unset" for ports; other lists refuse it anyway.
        return value if isinstance(value, str) and value else None

    return key


def _port(entry: Mapping[str, Any]) -> str | None:
    number = entry.get("containerPort")
    if not isinstance(number, int) or isinstance(number, bool):
        return None
    protocol = entry.get("protocol")
    return f"{number}/{protocol if isinstance(protocol, str) and protocol else _DEFAULT_PROTOCOL}"


def _repeats(
    entries: list[tuple[str, Mapping[str, Any]]], field: str, what: str, key: Key, why: str
) -> list[Issue]:
    first: dict[str, str] = {}
    issues: list[Issue] = []
    for where, entry in entries:
        value = key(entry)
        if value is None:
            continue
        if value in first:
            issues.append(
                Issue(
                    f"{where}.{field}",
                    f"duplicate {what} {value!r} (also {first[value]}): {why}",
                )
            )
            continue
        first[value] = where
    return issues
