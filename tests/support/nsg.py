"""How Azure evaluates a network security group's inbound rules, to ask the rules the program
builds which sources they let reach a port.
"""

from __future__ import annotations

import ipaddress


def nsg_verdict(rules: list[dict], source: str, port: int, peered: list[str]) -> str:
    """Azure's inbound evaluation: lowest priority number first, first match wins, then the
    default rules (AllowVnetInBound covers the virtual network and every peered range)."""
    address = ipaddress.ip_address(source)

    def source_matches(prefix: str) -> bool:
        if prefix == "*":
            return True
        if prefix == "VirtualNetwork":
            return any(address in ipaddress.ip_network(cidr) for cidr in peered)
        try:
            return address in ipaddress.ip_network(prefix)
        except ValueError:
            return False  # a service tag such as HDInsight: not one of the addresses tried here

    def port_matches(spec: str) -> bool:
        if spec == "*":
            return True
        low, _, high = spec.partition("-")
        return int(low) <= port <= int(high or low)

    for rule in sorted(rules, key=lambda r: r["priority"]):
        if (
            rule["direction"] == "Inbound"
            and source_matches(rule["sourceAddressPrefix"])
            and port_matches(rule["destinationPortRange"])
        ):
            return rule["access"]
    return "Allow" if source_matches("VirtualNetwork") else "Deny"
