"""Where an agent is and how to trust it: what a client for it is made from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentTarget:
    name: str
    url: str
    token: str
    certificate: str | None = None  # the pinned certificate (PEM)
    ca_certificate: str | None = None

    @property
    def https(self) -> bool:
        return self.url.lower().startswith("https://")
