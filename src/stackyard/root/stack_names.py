"""The stacks on a set of hosts: this host's from its stacks folder, each agent's from its
list (asked at once, within the agents' time limit). What a notification rule's stack
names are checked against when it is saved."""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import BaseModel, Field, TypeAdapter

from stackyard.agents.service import Agents, AgentView
from stackyard.errors import StackyardError
from stackyard.stacks.store import StackStore

#: This host, among the hosts a rule covers (the others are agent ids).
THIS_HOST = 0


class _Listed(BaseModel):
    """What is read of each stack an agent lists: its id."""

    id: Annotated[str, Field(max_length=200)]


_LISTED = TypeAdapter(list[_Listed])


class StackNames:
    def __init__(self, store: StackStore, agents: Agents, timeout: float) -> None:
        self.store = store
        self.agents = agents
        self.timeout = timeout

    async def __call__(self, hosts: tuple[int, ...]) -> tuple[set[str], bool]:
        """The stacks on `hosts` (none: every host, the disabled agents left out), and
        whether every one of them answered."""
        names: set[str] = set()
        if not hosts or THIS_HOST in hosts:
            names |= set(await asyncio.to_thread(self.store.ids))
        views = [
            view
            for view in await asyncio.to_thread(self.agents.all)
            if (view.id in hosts if hosts else view.enabled)
        ]
        listed = await asyncio.gather(*(self._of(view) for view in views))
        for found in listed:
            names |= found or set()
        return names, all(found is not None for found in listed)

    async def _of(self, view: AgentView) -> set[str] | None:
        """The agent's stacks; None when it could not be asked."""
        try:
            async with asyncio.timeout(self.timeout):
                client = await self.agents.client_for(view)
                return {stack.id for stack in await client.get("/stacks", _LISTED)}
        except (StackyardError, TimeoutError):
            return None
