"""What the API server's Go validation rejects in pod specs beyond the OpenAPI schema.

The published OpenAPI schemas describe shape only: `restartPolicy: Never` in a
Deployment, `imagePullPolicy: Sometimes` or two containers named `engine` all pass
them, yet `kubectl apply` is refused. These are the rules of
`k8s.io/kubernetes/pkg/apis/core/validation` (and `apps/validation` for the
controllers' templates) that an ML team's pod template can break, with the API
server's wording. Resource quantities are checked by the schema validator itself
(`builtin.py` gives Quantity a format), since they can appear anywhere.

A pod template owned by a workload controller (Deployment, ReplicaSet,
StatefulSet, DaemonSet, and the LeaderWorkerSet and KServe controllers, which
create StatefulSets and Deployments from theirs) must restart Always.

Per container (`validateContainerCommon`): env var names and envFrom prefixes
(`ValidateEnv`, `ValidateEnvFrom`), port names (`validateContainerPorts`: an
IANA service name, unique within the container) and volume mounts naming a volume
of the pod (`ValidateVolumeMounts`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from typing import Any, cast

from modelplane.core.kinds.base import as_list
from modelplane_cli.schema.errors import (
    FieldError,
    child,
    duplicate,
    index,
    invalid,
    not_found,
    not_supported,
    required,
)

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
CONTROLLER_RESTART_POLICIES = ["Always"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
# Built-in kinds whose `spec.template` is a pod template a controller runs.
CONTROLLER_KINDS = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
    }
)
_CONTAINER_LISTS = ("initContainers", "containers")
_MAX_PORT = 65535
# apimachinery's IsRelaxedEnvVarName. RelaxedEnvironmentVariableValidation is GA and
# locked on from Kubernetes 1.34, the oldest `spec.kubernetesVersion` admits
# (design/apis.md) and the version render validates built-ins against, so every
# cluster Modelplane targets takes any printable ASCII name but '='. (Before 1.32,
# where the gate went beta and on by default, IsEnvVarName's
# `[-._a-zA-Z][-._a-zA-Z0-9]*` applied.)
ENV_VAR_NAME_RULE = (
    "a valid environment variable name must consist only of printable ASCII characters "
    "other than '='"
)
# apimachinery's IsValidPortName (IANA_SVC_NAME, RFC 6335, lowercase only).
_MAX_PORT_NAME = 15
_PORT_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def builtin_problems(obj: Mapping[str, Any]) -> list[FieldError]:
    """Go-validation problems of a built-in Pod or workload controller's template."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    kind = str(obj.get("kind", ""))
    spec = _mapping(obj.get("spec"))
    if (group, kind) == ("", "Pod"):
        return pod_spec_problems(spec, "spec", controller=False)
    if (group, kind) in CONTROLLER_KINDS:
        template = _mapping(spec.get("template"))
        return pod_spec_problems(
            _mapping(template.get("spec")), "spec.template.spec", controller=True
        )
    if (group, kind) == ("discovery.k8s.io", "EndpointSlice"):
        return endpoint_address_problems(obj)
    return []


def endpoint_address_problems(slice_: Mapping[str, Any]) -> list[FieldError]:
    """An EndpointSlice's IP addresses the API server refuses (`ValidateEndpointIP`,
    pkg/apis/discovery/validation): one not of the slice's address type, and
    unspecified, loopback, link-local and link-local multicast ones, which would point
    a Service's traffic at whichever node or pod forwards it."""
    family = {"IPv4": 4, "IPv6": 6}.get(str(slice_.get("addressType")))
    if family is None:
        return []
    problems: list[FieldError] = []
    for i, endpoint in enumerate(_list_of_mappings(slice_.get("endpoints"))):
        for j, address in enumerate(as_list(endpoint.get("addresses"))):
            path = index(child(index("endpoints", i), "addresses"), j)
            try:
                ip = ipaddress.ip_address(str(address))
            except ValueError:
                problems.append(FieldError(path, invalid(address, "must be a valid IP address")))
                continue
            if ip.version != family:
                why = f"must be an IPv{family} address"
                problems.append(FieldError(path, invalid(address, why)))
                continue
            for refused, why in (
                (ip.is_unspecified, f"may not be unspecified ({address})"),
                (ip.is_loopback, "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
                (
                    ip.is_link_local,
                    "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                ),
                (
                    _link_local_multicast(ip),
                    "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
                ),
            ):
                if refused:
                    problems.append(FieldError(path, invalid(address, why)))
    return problems


def _link_local_multicast(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's `IP.IsLinkLocalMulticast`: 224.0.0.0/24, or an IPv6 multicast address of
    link-local scope (ff02::/16 and its flag variants)."""
    packed = ip.packed
    if ip.version == 4:
        return packed[:3] == bytes((224, 0, 0))
    return packed[0] == 0xFF and packed[1] & 0x0F == 0x02


def pod_spec_problems(spec: Mapping[str, Any], path: str, *, controller: bool) -> list[FieldError]:
    """Problems of one pod spec at `path`; `controller` when a workload controller owns it."""
    problems: list[FieldError] = []
    policy = spec.get("restartPolicy")
    allowed = CONTROLLER_RESTART_POLICIES if controller else RESTART_POLICIES
    if isinstance(policy, str) and policy not in allowed:
        problems.append(FieldError(child(path, "restartPolicy"), not_supported(policy, allowed)))
    names: set[str] = set()
    # A mount may only name one of the pod's volumes, whichever container it is in.
    volumes = {
        v["name"] for v in _list_of_mappings(spec.get("volumes")) if isinstance(v.get("name"), str)
    }
    for container_path, container in _containers(spec, path):
        name = container.get("name")
        if isinstance(name, str):
            if name in names:
                problems.append(FieldError(child(container_path, "name"), duplicate(name)))
            names.add(name)
        problems.extend(_container_problems(container, container_path))
        problems.extend(_env_problems(container, container_path))
        problems.extend(_volume_mount_problems(container, container_path, volumes))
    return problems


def _container_problems(container: Mapping[str, Any], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    if not container.get("image"):
        problems.append(FieldError(child(path, "image"), required()))
    pull = container.get("imagePullPolicy")
    if isinstance(pull, str) and pull not in PULL_POLICIES:
        problems.append(
            FieldError(child(path, "imagePullPolicy"), not_supported(pull, PULL_POLICIES))
        )
    port_names: set[str] = set()
    for i, port in enumerate(_list_of_mappings(container.get("ports"))):
        port_path = index(child(path, "ports"), i)
        name = port.get("name")
        if isinstance(name, str) and name:
            # As validateContainerPorts: a name that is no IANA service name is reported
            # as such and not counted; names need only be unique within the container
            # (across containers the API server only warns about duplicate ports).
            refusals = _port_name_problems(name)
            problems.extend(
                FieldError(child(port_path, "name"), invalid(name, why)) for why in refusals
            )
            if not refusals and name in port_names:
                problems.append(FieldError(child(port_path, "name"), duplicate(name)))
            elif not refusals:
                port_names.add(name)
        number = port.get("containerPort")
        if isinstance(number, int) and not 1 <= number <= _MAX_PORT:
            problems.append(
                FieldError(
                    child(port_path, "containerPort"),
                    invalid(number, f"must be between 1 and {_MAX_PORT}, inclusive"),
                )
            )
        protocol = port.get("protocol")
        if isinstance(protocol, str) and protocol not in PROTOCOLS:
            problems.append(
                FieldError(child(port_path, "protocol"), not_supported(protocol, PROTOCOLS))
            )
    return problems


def _port_name_problems(name: str) -> list[str]:
    """Why `name` is no IANA service name, in IsValidPortName's words and order."""
    why: list[str] = []
    if len(name) > _MAX_PORT_NAME:
        why.append(f"must be no more than {_MAX_PORT_NAME} characters")
    if not name or any(c not in _PORT_NAME_CHARS for c in name):
        why.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any("a" <= c <= "z" for c in name):
        why.append("must contain at least one letter (a-z)")
    if "--" in name:
        why.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        why.append("must not begin or end with a hyphen")
    return why


def _env_var_name_ok(name: str) -> bool:
    """IsRelaxedEnvVarName (see ENV_VAR_NAME_RULE): printable ASCII, no '='."""
    return bool(name) and all(" " <= c <= "~" and c != "=" for c in name)


def _env_problems(container: Mapping[str, Any], path: str) -> list[FieldError]:
    """`ValidateEnv` and `ValidateEnvFrom`'s name rules: an env var's name is required
    and an envFrom prefix, when set, is held to the same rule as a name."""
    problems: list[FieldError] = []
    for i, var in enumerate(_list_of_mappings(container.get("env"))):
        name_path = child(index(child(path, "env"), i), "name")
        name = var.get("name")
        if name == "":
            problems.append(FieldError(name_path, required()))
        elif isinstance(name, str) and not _env_var_name_ok(name):
            problems.append(FieldError(name_path, invalid(name, ENV_VAR_NAME_RULE)))
    for i, source in enumerate(_list_of_mappings(container.get("envFrom"))):
        prefix = source.get("prefix")
        if isinstance(prefix, str) and prefix and not _env_var_name_ok(prefix):
            prefix_path = child(index(child(path, "envFrom"), i), "prefix")
            problems.append(FieldError(prefix_path, invalid(prefix, ENV_VAR_NAME_RULE)))
    return problems


def _volume_mount_problems(
    container: Mapping[str, Any], path: str, volumes: set[str]
) -> list[FieldError]:
    """`ValidateVolumeMounts`: each mount names one of the pod's volumes. (The API
    server counts only the volumes it accepts; one it refuses fails the object anyway.)"""
    problems: list[FieldError] = []
    for j, mount in enumerate(_list_of_mappings(container.get("volumeMounts"))):
        name = mount.get("name")
        if not isinstance(name, str):
            continue  # absent or mistyped: the schema reports it
        name_path = child(index(child(path, "volumeMounts"), j), "name")
        if not name:
            problems.append(FieldError(name_path, required()))
        if name not in volumes:
            problems.append(FieldError(name_path, not_found(name)))
    return problems


def _containers(spec: Mapping[str, Any], path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for field in _CONTAINER_LISTS:
        for i, container in enumerate(_list_of_mappings(spec.get(field))):
            yield index(child(path, field), i), container


def _mapping(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def _list_of_mappings(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [cast(Mapping[str, Any], v) for v in cast(list[Any], value) if isinstance(v, Mapping)]
