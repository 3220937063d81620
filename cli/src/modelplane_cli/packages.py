"""The names Crossplane gives Modelplane's packages once they are installed.

A Composition's `functionRef.name` must be the name of an installed Function.
When the Configuration's `dependsOn` installs a function, Crossplane's package
manager names it after the package's repository path without the registry host,
made a DNS label (crossplane v2.3.4
`internal/controller/pkg/resolver/reconciler.go` `NewPackage`:
`xpkg.ToDNSLabel(ref.Context().RepositoryStr())`; crossplane-runtime v2.3.x
`pkg/xpkg/name.go` `ToDNSLabel`). This module is the one place those names are
derived: the Compositions, the Configuration's `dependsOn`, the functions' entry
points (which `modelplane render` looks runners up by) and `make package` are all
held to it by tests (`tests/install/test_packages.py`).
"""

from typing import Final

# Where the function packages are pushed: `<REGISTRY>/<ORGANIZATION>/<directory>`,
# whose repository path `modelplane/<directory>` Crossplane turns into the name
# `modelplane-<directory>`.
REGISTRY: Final = "ghcr.io"
ORGANIZATION: Final = "modelplane"
# The directories under functions/, one Function package each.
FUNCTION_DIRECTORIES: Final = (
    "compose-inference-class",
    "compose-inference-cluster",
    "compose-inference-gateway",
    "compose-model-cache",
    "compose-model-deployment",
    "compose-model-endpoint",
    "compose-model-replica",
    "compose-model-service",
)
# The Configuration package holding the XRDs and Compositions.
CONFIGURATION_REPOSITORY: Final = f"{REGISTRY}/{ORGANIZATION}/modelplane"

_DNS_LABEL_MAX: Final = 63


def to_dns_label(text: str) -> str:
    """crossplane-runtime's `xpkg.ToDNSLabel`, byte for byte.

    Keeps `[a-z0-9]`, writes `-` for each `. / : -` that is not the first byte,
    the 63rd or the last, drops everything else (upper case included), stops
    after the byte at offset 62, then trims `-` from both ends. Go ranges over a
    string by rune, so only the byte each rune starts at is looked at.
    """
    data = text.encode()
    kept: list[str] = []
    offset = 0
    for char in text:
        byte = data[offset]
        if ord("a") <= byte <= ord("z") or ord("0") <= byte <= ord("9"):
            kept.append(chr(byte))
        if chr(byte) in "./:-" and offset not in (0, _DNS_LABEL_MAX - 1, len(data) - 1):
            kept.append("-")
        if offset == _DNS_LABEL_MAX - 1:
            break
        offset += len(char.encode())
    return "".join(kept).strip("-")


def repository_path(reference: str) -> str:
    """An OCI reference's repository without registry, tag or digest, as
    go-containerregistry's `RepositoryStr` gives it.

    The first segment is the registry when it holds `.` or `:` or is `localhost`;
    otherwise the registry is Docker Hub, whose single-segment names are
    `library/<name>`.
    """
    repository = reference.split("@", 1)[0]
    last_slash = repository.rfind("/")
    colon = repository.rfind(":")
    if colon > last_slash:
        repository = repository[:colon]
    first, _, rest = repository.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return rest
    if "/" not in repository:
        return f"library/{repository}"
    return repository


def installed_name(reference: str) -> str:
    """The name Crossplane's package manager gives a package it installs as a
    dependency (and the name the guide installs it under by hand)."""
    return to_dns_label(repository_path(reference))


def function_repository(directory: str) -> str:
    """The OCI repository a function's package is pushed to."""
    return f"{REGISTRY}/{ORGANIZATION}/{directory}"


def function_name(directory: str) -> str:
    """The installed Function's name: what Compositions put in `functionRef.name`."""
    return installed_name(function_repository(directory))


FUNCTION_NAMES: Final = tuple(function_name(d) for d in FUNCTION_DIRECTORIES)
