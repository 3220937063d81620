"""The Pod Security Standards' baseline level, checked on a team's pod template.

Kubernetes' Pod Security admission refuses a pod whose namespace enforces a level
the pod breaks. Modelplane's tenant namespaces enforce `baseline` on Native
clusters; on KServe clusters they only warn, since KServe's own multi-node presets
add capabilities baseline refuses (`workloads.kserve`). So a team's template with
host access would run there beside other teams' replicas. The fleet scheduler
checks the team's template against the level the cluster's tenant namespaces
stand for (`scheduling.pod_security`), before any replica carries it, so the
template never reaches a cluster that must not run it, whatever that cluster's
admission enforces, and the match trace names the field.

The rules are the baseline checks of k8s.io/pod-security-admission (`policy/check_*.go`)
at its latest version: host namespaces, privileged and Windows HostProcess
containers, capabilities beyond the default set, hostPath volumes, host ports,
probe and lifecycle hosts, AppArmor, SELinux, `/proc` mounts, seccomp and sysctls.
The template is the team's: what is free-form there is read as written, and a
value of the wrong shape is no violation (the schema or the API server refuses it).
"""

from collections.abc import Iterator, Mapping
from typing import Any, Final

from modelplane.core.issues import Issue
from modelplane.core.kinds.base import as_list, mapping

LEVEL_PRIVILEGED: Final = "privileged"
LEVEL_BASELINE: Final = "baseline"
LEVEL_RESTRICTED: Final = "restricted"
LEVELS: Final = (LEVEL_PRIVILEGED, LEVEL_BASELINE, LEVEL_RESTRICTED)

# `capabilities_baseline`: what a container may add (Docker's default set).
ALLOWED_CAPABILITIES: Final = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# `sysctls`: the namespaced, isolated ones (the union up to v1.37).
ALLOWED_SYSCTLS: Final = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
        "net.ipv4.tcp_slow_start_after_idle",
        "net.ipv4.tcp_notsent_lowat",
    }
)
ALLOWED_SELINUX_TYPES: Final = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
ALLOWED_PROFILE_TYPES: Final = frozenset({"RuntimeDefault", "Localhost"})
APPARMOR_ANNOTATION_PREFIX: Final = "container.apparmor.security.beta.kubernetes.io/"
_CONTAINER_LISTS: Final = ("initContainers", "containers", "ephemeralContainers")
_HOST_NAMESPACES: Final = ("hostNetwork", "hostPID", "hostIPC")
_PROBES: Final = ("livenessProbe", "readinessProbe", "startupProbe")
_HANDLERS: Final = ("postStart", "preStop")


def _issue(path: str, what: str) -> Issue:
    return Issue(path, f"Pod Security {LEVEL_BASELINE} forbids {what}")


def _containers(spec: Mapping[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every container of the pod, init and ephemeral ones too, with its path."""
    for field in _CONTAINER_LISTS:
        for i, container in enumerate(as_list(spec.get(field))):
            yield f"{path}.{field}[{i}]", mapping(container)


def _context_issues(
    context: Mapping[str, Any], path: str, *, pod: bool, granted: frozenset[str] = frozenset()
) -> list[Issue]:
    """A pod's or container's securityContext: Windows HostProcess, AppArmor, SELinux,
    seccomp; a container's also privileged, capabilities and `/proc` mounts."""
    found: list[Issue] = []
    if mapping(context.get("windowsOptions")).get("hostProcess") is True:
        found.append(_issue(f"{path}.windowsOptions.hostProcess", "Windows HostProcess"))
    for field, what in (
        ("appArmorProfile", "an AppArmor profile"),
        ("seccompProfile", "a seccomp profile"),
    ):
        kind = mapping(context.get(field)).get("type")
        if isinstance(kind, str) and kind not in ALLOWED_PROFILE_TYPES:
            found.append(_issue(f"{path}.{field}.type", f"{what} of type {kind}"))
    selinux = mapping(context.get("seLinuxOptions"))
    kind = selinux.get("type")
    if isinstance(kind, str) and kind not in ALLOWED_SELINUX_TYPES:
        found.append(_issue(f"{path}.seLinuxOptions.type", f"SELinux type {kind}"))
    found.extend(
        _issue(f"{path}.seLinuxOptions.{field}", f"setting the SELinux {field}")
        for field in ("user", "role")
        if selinux.get(field)
    )
    if pod:
        return found
    if context.get("privileged") is True:
        found.append(_issue(f"{path}.privileged", "privileged containers"))
    added = as_list(mapping(context.get("capabilities")).get("add"))
    for i, capability in enumerate(added):
        if not isinstance(capability, str):
            continue
        if capability not in ALLOWED_CAPABILITIES and capability not in granted:
            found.append(_issue(f"{path}.capabilities.add[{i}]", f"adding capability {capability}"))
    return found


def _hosts(container: Mapping[str, Any], path: str) -> list[Issue]:
    """Probes and lifecycle handlers aimed at a host other than the pod's own."""
    handlers = [(f"{path}.{p}", mapping(container.get(p))) for p in _PROBES]
    lifecycle = mapping(container.get("lifecycle"))
    handlers += [(f"{path}.lifecycle.{h}", mapping(lifecycle.get(h))) for h in _HANDLERS]
    found: list[Issue] = []
    for at, handler in handlers:
        for action in ("httpGet", "tcpSocket"):
            host = mapping(handler.get(action)).get("host")
            if isinstance(host, str) and host:
                found.append(_issue(f"{at}.{action}.host", f"a {action} host ({host})"))
    return found


def baseline_issues(
    template: Mapping[str, Any],
    path: str,
    granted: Mapping[str, frozenset[str]] | None = None,
) -> list[Issue]:
    """What in the pod template at `path` the baseline level refuses, each naming its
    field (empty when it meets the level). `granted`: capabilities the backend gives a
    container anyway, by container name (KServe's multi-node presets, the engine's),
    which the template may repeat there."""
    spec = mapping(template.get("spec"))
    prefix = f"{path}." if path else ""
    at = f"{prefix}spec"
    found = [
        _issue(f"{at}.{f}", "host namespaces") for f in _HOST_NAMESPACES if spec.get(f) is True
    ]
    for i, volume in enumerate(as_list(spec.get("volumes"))):
        if mapping(volume).get("hostPath") is not None:
            found.append(_issue(f"{at}.volumes[{i}].hostPath", "hostPath volumes"))
    context = mapping(spec.get("securityContext"))
    found += _context_issues(context, f"{at}.securityContext", pod=True)
    for i, sysctl in enumerate(as_list(context.get("sysctls"))):
        name = mapping(sysctl).get("name")
        if isinstance(name, str) and name not in ALLOWED_SYSCTLS:
            found.append(_issue(f"{at}.securityContext.sysctls[{i}].name", f"sysctl {name}"))
    # A pod in its own user namespace may set any /proc mount (v1.35).
    user_namespace = spec.get("hostUsers") is False
    for container_path, container in _containers(spec, at):
        own = mapping(container.get("securityContext"))
        given = (granted or {}).get(str(container.get("name")), frozenset[str]())
        found += _context_issues(own, f"{container_path}.securityContext", pod=False, granted=given)
        mount = own.get("procMount")
        if isinstance(mount, str) and mount != "Default" and not user_namespace:
            found.append(
                _issue(f"{container_path}.securityContext.procMount", f"procMount {mount}")
            )
        for i, port in enumerate(as_list(container.get("ports"))):
            host_port = mapping(port).get("hostPort")
            if isinstance(host_port, int | float) and host_port:
                found.append(_issue(f"{container_path}.ports[{i}].hostPort", "host ports"))
        found += _hosts(container, container_path)
    annotations = mapping(mapping(template.get("metadata")).get("annotations"))
    for key, value in sorted(annotations.items()):
        allowed = not value or value == "runtime/default" or str(value).startswith("localhost/")
        if key.startswith(APPARMOR_ANNOTATION_PREFIX) and not allowed:
            found.append(
                _issue(f"{prefix}metadata.annotations[{key}]", f"the AppArmor profile {value}")
            )
    return found
