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
