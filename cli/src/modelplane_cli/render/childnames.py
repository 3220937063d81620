"""Composed resource names as Crossplane v2.3's `internal/names` makes and checks them.

`Compose` gives a composed resource without a name the prefix `generateName`
(the root composite's name and `-` unless the function set one), then names it
once, deterministically, from the composite's uid and the composition resource
name (`ChildName`): the random fallback of `GenerateName` is never reached there.
The name is then checked as `ValidateName` does; an invalid one stops the compose.
"""

from __future__ import annotations

import hashlib

from modelplane.core import naming

# `names.hashLength`: the hex characters of the hash a child name ends in.
_HASH_LENGTH = 12
# The RBAC kinds whose names may hold `:` (system:...), as `ValidateName` allows.
_RBAC_GROUP = "rbac.authorization.k8s.io"
_RBAC_KINDS = frozenset({"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"})


def child_name(prefix: str, owner_uid: str, resource_name: str) -> str:
    """`names.ChildName`: the prefix (ending in one `-`, cut to fit 63) and 12 hex of
    sha256(owner uid + composition resource name)."""
    suffix = hashlib.sha256((owner_uid + resource_name).encode()).hexdigest()[:_HASH_LENGTH]
    if prefix and not prefix.endswith("-"):
        prefix += "-"
    if len(prefix) + _HASH_LENGTH <= naming.DNS_LABEL_MAX:
        return prefix + suffix
    room = naming.DNS_LABEL_MAX - _HASH_LENGTH
    if not prefix[:room].endswith("-"):
        return prefix[: room - 1] + "-" + suffix
    return prefix[:room] + suffix


def valid_name(name: str, group: str, kind: str) -> bool:
    """`names.ValidateName`: a DNS-1123 subdomain, `:` allowed in the RBAC kinds' names."""
    if group == _RBAC_GROUP and kind in _RBAC_KINDS:
        name = name.replace(":", "")
    return naming.is_dns_subdomain(name)
