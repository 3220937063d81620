"""Endpoint URLs: what a replica is reached at, and the external URLs teams give.

An endpoint URL is `scheme://host[:port][/path]`. A replica reached through its
cluster's Gateway has the path of its route there (`/<namespace>/<name>`); an
external model's URL is the base URL an OpenAI client is given, so its path is
empty or `/v1`: the hub route sends a request's own `/v1/...` path to every
backend unchanged, and a different prefix per backend would need a per-backend
path rewrite, which Gateway API implementations do not apply portably.
"""

import ipaddress
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from modelplane.core.issues import InvalidInputError
from modelplane.core.naming import is_dns_subdomain
from modelplane.core.vocabulary import Reason

from .names import HTTP_PORT, HTTPS_PORT
from .public_ips import is_public

SCHEMES: Final = {"http": HTTP_PORT, "https": HTTPS_PORT}
OPENAI_BASE_PATHS: Final = ("", "/", "/v1", "/v1/")


@dataclass(frozen=True)
class URL:
    scheme: str
    host: str
    port: int
    path: str = ""

    @property
    def ip(self) -> bool:
        """Whether the host is an IP address rather than a DNS name."""
        return is_ip(self.host.strip("[]"))

    @property
    def ipv6(self) -> bool:
        return self.ip and ":" in self.host

    def __str__(self) -> str:
        default = SCHEMES[self.scheme] == self.port
        host = f"[{self.host}]" if self.ipv6 else self.host
        authority = host if default else f"{host}:{self.port}"
        return f"{self.scheme}://{authority}{self.path}"


def parse_url(text: str, path: str) -> URL:
    """An http(s) URL with a host; InvalidInputError naming `path` otherwise."""

    def bad(why: str) -> InvalidInputError:
        return InvalidInputError.at(path, f"{text!r} {why}", Reason.INVALID_URL)

    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise bad(f"is not a URL: {error}") from error
    if parts.scheme not in SCHEMES:
        raise bad("must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise bad("must not carry credentials")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise bad("must not have a query or fragment")
    host = (parts.hostname or "").lower()
    if not host:
        raise bad("has no host")
    if not _is_host(host):
        raise bad(f"has an invalid host {host!r}")
    if port == 0:
        raise bad("has port 0")
    return URL(parts.scheme, host, port or SCHEMES[parts.scheme], parts.path)


def _is_host(host: str) -> bool:
    return is_ip(host) or is_dns_subdomain(host)


def is_ip(host: str) -> bool:
    """Whether `host` is an IP address rather than a DNS name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_of(text: str) -> str:
    """The host a URL names, lowercased and without a trailing dot; never raises. Text
    urllib cannot split (a Gateway's named address may hold anything) gives its
    authority as written, which is all a route's hostname could be compared with."""
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        authority = text.split("://", 1)[-1].split("/", 1)[0]
        host = authority.rpartition("@")[2].strip("[]").lower()
    return host.rstrip(".")


# The labels that make a DNS name a Service's or a pod's inside a cluster
# (`<service>.<namespace>.svc.<domain>`, `<ip>.<namespace>.pod.<domain>`), and the
# suffixes no public resolver answers for, whatever the cluster's domain is called.
_IN_CLUSTER_LABELS: Final = frozenset({"svc", "pod"})
_IN_CLUSTER_SUFFIXES: Final = (".local", ".internal", ".localhost")


def _unroutable(url: URL) -> str | None:
    """Why an external endpoint's host would have the hub's gateway proxy a tenant's
    requests into a cluster rather than out of it, or None.

    The hub routes to an external host through an ExternalName Service (a DNS name)
    or an EndpointSlice (an IP), which no ReferenceGrant guards: a name a cluster's
    DNS answers, or an IP of a cluster's Services and pods, would let one team's
    ModelService reach another team's pods, the API server or a node's metadata
    service through the platform's public entry."""
    host = url.host.strip("[]")
    if url.ip:
        if not is_public(ipaddress.ip_address(host)):
            return (
                "is not a public IP address (private, loopback, link-local and reserved "
                "ranges, and IPv6 addresses carrying one, may name a cluster's own "
                "Services, pods and nodes)"
            )
        return None
    labels = host.split(".")
    if len(labels) == 1:
        return "is a single-label name, which a cluster's DNS resolves in its own domains"
    if host.endswith(_IN_CLUSTER_SUFFIXES) or _IN_CLUSTER_LABELS.intersection(labels[2:]):
        return "is an in-cluster name (a Service's or pod's, or under a local domain)"
    return None


def external_url(text: str, path: str) -> URL:
    """An external model's base URL: an http(s) URL whose path is empty or /v1, at a
    host outside every cluster (`_unroutable`)."""
    url = parse_url(text, path)
    unroutable = _unroutable(url)
    if unroutable is not None:
        raise InvalidInputError.at(
            path,
            f"{text!r}: its host {url.host!r} {unroutable}; an external endpoint must be "
            "a public DNS name or IP address",
            Reason.INVALID_URL,
        )
    if url.path not in OPENAI_BASE_PATHS:
        raise InvalidInputError.at(
            path,
            f"{text!r} has the path {url.path!r}: an external endpoint is the base URL an "
            "OpenAI client is given, ending at the host or at /v1, because the gateway "
            "forwards a request's own /v1/... path unchanged",
            Reason.INVALID_URL,
        )
    return url
