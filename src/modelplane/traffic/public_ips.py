"""Whether an IP address is public: routed on the internet, outside every cluster.

The ranges are written here, from IANA's IPv4 and IPv6 special-purpose address
registries, rather than read from `ipaddress`'s `is_global`: Python has changed
those lists in patch releases (3.11.10 and 3.12.4 among them), and the same
ModelService must get the same answer on every machine. An IPv6 address that
carries an IPv4 address a translator or tunnel delivers to (IPv4-mapped, NAT64's
well-known prefix, 6to4) is as public as the IPv4 address it carries. A block is
refused whole, with the few globally reachable assignments inside it (192.0.0.9/32,
2001:20::/28 and the like: anycast and protocol services, where no model is served).
"""

import ipaddress
from typing import Final

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4_NOT_PUBLIC: Final = tuple(
    ipaddress.IPv4Network(cidr)
    for cidr in (
        "0.0.0.0/8",  # this network
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, where cloud metadata services answer
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and the limited broadcast address
    )
)
_V6_NOT_PUBLIC: Final = tuple(
    ipaddress.IPv6Network(cidr)
    for cidr in (
        "::/96",  # unspecified, loopback and the deprecated IPv4-compatible addresses
        "64:ff9b:1::/48",  # NAT64 for local use
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments (Teredo among them)
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing identifiers
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def is_public(address: IPAddress) -> bool:
    """Whether `address` reaches a host on the internet rather than inside a network."""
    if isinstance(address, ipaddress.IPv4Address):
        return not any(address in network for network in _V4_NOT_PUBLIC)
    carried = _carried_ipv4(address)
    if carried is not None:
        return is_public(carried)
    return not any(address in network for network in _V6_NOT_PUBLIC)


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
