"""The Pod Security Standards' `baseline` level, as checks on a pod spec.

Written from the standard's table (kubernetes.io, "Pod Security Standards",
Baseline): what a pod in a namespace enforcing `baseline` may not set. The
renders check what Modelplane puts into tenant namespaces against it, since
those namespaces enforce `baseline` unless the platform says otherwise.
"""

from collections.abc import Iterator
from typing import Any

# Capabilities a container may add under baseline; anything else is refused.
ALLOWED_CAPABILITIES = frozenset(
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
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def pod_specs(value: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec inside a manifest: any mapping with a `containers` list."""
    if isinstance(value, dict):
        if isinstance(value.get("containers"), list):
            yield value
        for item in value.values():
            yield from pod_specs(item)
    elif isinstance(value, list):
        for item in value:
            yield from pod_specs(item)


def annotations(value: Any) -> Iterator[dict[str, Any]]:
    """Every `annotations` mapping inside a manifest (pod templates' among them)."""
    if isinstance(value, dict):
        found = value.get("annotations")
        if isinstance(found, dict):
            yield found
        for item in value.values():
            yield from annotations(item)
    elif isinstance(value, list):
        for item in value:
            yield from annotations(item)


def _context_violations(where: str, context: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if context.get("windowsOptions", {}).get("hostProcess"):
        out.append(f"{where}.windowsOptions.hostProcess")
    selinux = context.get("seLinuxOptions", {})
    if selinux.get("type", "") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        out.append(f"{where}.seLinuxOptions")
    if context.get("seccompProfile", {}).get("type") == "Unconfined":
        out.append(f"{where}.seccompProfile")
    if context.get("appArmorProfile", {}).get("type") == "Unconfined":
        out.append(f"{where}.appArmorProfile")
    return out


def violations(spec: dict[str, Any]) -> list[str]:
    """The fields of pod spec `spec` that `baseline` refuses, as paths; [] when it passes."""
    out = [f"spec.{field}" for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field)]
    out += [
        f"spec.volumes[{volume.get('name')}].hostPath"
        for volume in spec.get("volumes", [])
        if "hostPath" in volume
    ]
    pod_context: dict[str, Any] = spec.get("securityContext", {})
    out += _context_violations("spec.securityContext", pod_context)
    out += [
        f"spec.securityContext.sysctls[{s.get('name')}]"
        for s in pod_context.get("sysctls", [])
        if s.get("name") not in SAFE_SYSCTLS
    ]
    for field in _CONTAINER_LISTS:
        for container in spec.get(field, []):
            where = f"spec.{field}[{container.get('name')}]"
            context: dict[str, Any] = container.get("securityContext", {})
            if context.get("privileged"):
                out.append(f"{where}.securityContext.privileged")
            added = set(context.get("capabilities", {}).get("add", [])) - ALLOWED_CAPABILITIES
            if added:
                out.append(f"{where}.securityContext.capabilities.add{sorted(added)}")
            if context.get("procMount", "Default") != "Default":
                out.append(f"{where}.securityContext.procMount")
            out += _context_violations(f"{where}.securityContext", context)
            out += [
                f"{where}.ports[{p.get('containerPort')}].hostPort"
                for p in container.get("ports", [])
                if p.get("hostPort")
            ]
    return out


def annotation_violations(found: dict[str, Any]) -> list[str]:
    """AppArmor annotations that `baseline` refuses (anything but the runtime's or a
    node's own profile)."""
    return [
        key
        for key, value in found.items()
        if key.startswith(APPARMOR_PREFIX)
        and value != "runtime/default"
        and not str(value).startswith("localhost/")
    ]
