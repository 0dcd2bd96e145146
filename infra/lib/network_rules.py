"""Address-space checks: the networks that get peered must not overlap; ranges must be IPv4 CIDRs."""

from __future__ import annotations

import ipaddress
from itertools import combinations


def parse_cidr(value: str, key: str) -> ipaddress.IPv4Network:
    """`value` as an IPv4 network; a ValueError names the config key and the expected form."""
    try:
        network = ipaddress.ip_network(value.strip(), strict=True)
    except ValueError as error:
        raise ValueError(f"{key} = {value!r} is not a CIDR block like 10.10.0.0/16 ({error})") from None
    if not isinstance(network, ipaddress.IPv4Network):
        raise ValueError(f"{key} = {value!r} is IPv6; the virtual networks and NSG rules here use IPv4 ranges")
    return network


# IPv4 blocks that hold no address a person's traffic can come from on the internet: IANA's
# special-purpose registry (RFC 6890 and its updates) with documentation's three (RFC 5737),
# and multicast and the reserved 240/4 (RFC 1112). An NSG rule admitting only such a range
# admits nobody from outside Azure.
SPECIAL_PURPOSE: dict[str, str] = {
    "0.0.0.0/8": "'this network' (RFC 6890)",
    "10.0.0.0/8": "private-use (RFC 1918)",
    "100.64.0.0/10": "shared address space behind carrier-grade NAT (RFC 6598)",
    "127.0.0.0/8": "loopback (RFC 6890)",
    "169.254.0.0/16": "link-local (RFC 3927)",
    "172.16.0.0/12": "private-use (RFC 1918)",
    "192.0.0.0/24": "IETF protocol assignments (RFC 6890)",
    "192.0.2.0/24": "documentation, TEST-NET-1 (RFC 5737)",
    "192.88.99.0/24": "the retired 6to4 relay anycast (RFC 7526)",
    "192.168.0.0/16": "private-use (RFC 1918)",
    "198.18.0.0/15": "benchmarking (RFC 2544)",
    "198.51.100.0/24": "documentation, TEST-NET-2 (RFC 5737)",
    "203.0.113.0/24": "documentation, TEST-NET-3 (RFC 5737)",
    "224.0.0.0/4": "multicast (RFC 1112)",
    "240.0.0.0/4": "reserved (RFC 1112)",
}


def special_purpose(network: ipaddress.IPv4Network) -> str | None:
    """What the special-purpose block that holds all of `network` is for, or None when `network`
    holds an address of the public internet. Pure."""
    for block, purpose in SPECIAL_PURPOSE.items():
        if network.subnet_of(ipaddress.IPv4Network(block)):
            return f"{block}, {purpose}"
    return None


def managed_vnet_prefix(cidr: str) -> str:
    """A workspace's managed network /16 as the workspace API's `vnetAddressPrefix` takes it:
    its first two octets ("10.139.0.0/16" -> "10.139"). Microsoft's quickstart templates:
    "The first 2 octets of the virtual network /16 address range (e.g., '10.139' for the
    address range 10.139.0.0/16)"; the REST spec's default is "10.139"."""
    network = ipaddress.ip_network(cidr.strip(), strict=True)
    if network.prefixlen != 16:
        raise ValueError(
            f"{cidr} is a /{network.prefixlen}: an Azure Databricks managed network is a /16 "
            "(the workspace takes its first two octets), for example 10.139.0.0/16"
        )
    return ".".join(str(network.network_address).split(".")[:2])


def injected_subnets(vnet_cidr: str) -> tuple[str, str]:
    """The default (host, container) subnets of an injected Databricks network: its second and
    first quarters, as Microsoft's VNet-injection quickstart template lays out a /16 (container
    10.179.0.0/18, host 10.179.64.0/18). A /24 gives two /26, Microsoft's smallest."""
    network = ipaddress.ip_network(vnet_cidr.strip(), strict=True)
    quarters = list(network.subnets(prefixlen_diff=2))
    return str(quarters[1]), str(quarters[0])


def overlapping_ranges(ranges: dict[str, str]) -> list[tuple[str, str]]:
    """The pairs of named ranges that overlap (peered networks need disjoint address spaces)."""
    parsed = {name: ipaddress.ip_network(cidr) for name, cidr in ranges.items()}
    return [(a, b) for a, b in combinations(parsed, 2) if parsed[a].overlaps(parsed[b])]


def contains(outer: str, inner: str) -> bool:
    """Whether the range `inner` lies inside `outer` (a subnet inside its virtual network)."""
    return ipaddress.ip_network(inner).subnet_of(ipaddress.ip_network(outer))  # type: ignore[arg-type]
