"""Kubernetes label and annotation syntax, checked the way the API server checks it."""

import re

from modelplane.core.naming import DNS_SUBDOMAIN_MAX, is_dns_subdomain

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE_MAX = 63
NAME_MAX = 63
PREFIX_MAX = DNS_SUBDOMAIN_MAX
ANNOTATIONS_TOTAL_MAX = 256 * 1024


def key_error(key: str) -> str | None:
    """Why `key` is not a valid label or annotation key, or None when it is."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        return "a key holds at most one '/'"
    if key.startswith("/"):
        return "the prefix before '/' must not be empty"
    if prefix and not is_dns_subdomain(prefix):
        return f"prefix {prefix!r} must be a DNS subdomain of at most {PREFIX_MAX} characters"
    if not name or len(name) > NAME_MAX or not _NAME.match(name):
        return (
            f"name {name!r} must be 1 to {NAME_MAX} alphanumerics, '-', '_' or '.', "
            "starting and ending with an alphanumeric"
        )
    return None


def value_error(value: str) -> str | None:
    """Why `value` is not a valid label value, or None when it is."""
    if value == "":
        return None
    if len(value) > LABEL_VALUE_MAX:
        return f"must be at most {LABEL_VALUE_MAX} characters, not {len(value)}"
    if not _NAME.match(value):
        return "must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
    return None
