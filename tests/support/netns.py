"""A network namespace the central cannot reach: a veth pair to this host, and a rule in
the namespace dropping every new connection coming in. What runs inside reaches the
host's end of the pair (the central listening there), and nothing reaches it.

    with unreachable_namespace() as ns:
        ns.run("stackyard", "agent", ...)      # a process inside
        ns.host_ip                             # where the central listens
"""

from __future__ import annotations

import contextlib
import random
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass(frozen=True)
class Namespace:
    name: str
    host_ip: str  # this host's end of the pair
    inside_ip: str  # the namespace's end

    def command(self, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.name, *args]


@contextlib.contextmanager
def unreachable_namespace() -> Iterator[Namespace]:
    tag = uuid.uuid4().hex[:6]
    name, host_end, inside_end = f"sy-ns-{tag}", f"syh{tag}", f"syn{tag}"
    octet = random.randrange(1, 250)
    host_ip, inside_ip = f"10.252.{octet}.1", f"10.252.{octet}.2"
    _ip("netns", "add", name)
    try:
        _ip("link", "add", host_end, "type", "veth", "peer", "name", inside_end)
        _ip("link", "set", inside_end, "netns", name)
        _ip("addr", "add", f"{host_ip}/30", "dev", host_end)
        _ip("link", "set", host_end, "up")
        inside = ["netns", "exec", name, "ip"]
        _ip(*inside, "addr", "add", f"{inside_ip}/30", "dev", inside_end)
        _ip(*inside, "link", "set", inside_end, "up")
        _ip(*inside, "link", "set", "lo", "up")
        subprocess.run(
            ["ip", "netns", "exec", name, "iptables", "-A", "INPUT", "-i", inside_end,
             "-m", "conntrack", "--ctstate", "NEW", "-j", "DROP"],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
        yield Namespace(name, host_ip, inside_ip)
    finally:
        subprocess.run(["ip", "link", "del", host_end], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)
