"""Stable, opaque, length-bounded names.

A name derived here is a pure function of its parts, so the same inputs always
give the same name, and it never spells out placement: a replica's name does not
say which cluster it runs on, so moving nothing never renames anything.
"""

import hashlib
import re

DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
# Helm refuses a release name longer than 53 characters (its names become label
# values with a suffix), and provider-helm installs a Release under its name.
HELM_RELEASE_MAX = 53
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_HASH_LEN = 10


def digest(*parts: str, length: int = _HASH_LEN) -> str:
    """A lowercase hex digest of the parts, unambiguous about part boundaries."""
    joined = "\x00".join(parts).encode()
    return hashlib.sha256(joined).hexdigest()[:length]


def hashed_name(prefix: str, *parts: str, max_len: int = DNS_LABEL_MAX) -> str:
    """`<prefix>-<digest of parts>`, with the prefix cut so the whole fits max_len.

    The digest covers the parts only, so two different prefixes never collide by
    truncation, and the prefix stays a readable hint for humans.
    """
    suffix = digest(*parts)
    room = max_len - len(suffix) - 1
    head = prefix[:room].rstrip("-.")
    return f"{head}-{suffix}" if head else suffix


def fitted(name: str, max_len: int = DNS_LABEL_MAX) -> str:
    """`name` itself when it fits `max_len`, else `hashed_name` of it: cut, and suffixed
    with a digest of the whole name, so names that differ only past the cut stay apart
    and a short name is never renamed."""
    return name if len(name) <= max_len else hashed_name(name, name, max_len=max_len)


def is_dns_label(value: str) -> bool:
    return len(value) <= DNS_LABEL_MAX and bool(_DNS_LABEL.match(value))


def is_dns_subdomain(value: str) -> bool:
    return len(value) <= DNS_SUBDOMAIN_MAX and bool(_DNS_SUBDOMAIN.match(value))
