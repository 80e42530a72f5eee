"""The outcome of work a user started on an agent, audited on the central when it ends.

An agent relays an entry "started" for work it accepted that outlives the answer (a
backup or restore, its own update). The central records that, and follows the work on
the agent until it ends, then records the outcome under the same user: the central
decides what it records, from what the agent serves (the run's state, the update's
result), and an agent that stops answering, or work replaced by other work, is recorded
as such, never as a success. Followed in this process only: a central restarted
meanwhile records the start and not the end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pydantic import TypeAdapter

from stackyard.agents.service import Agents
from stackyard.errors import StackyardError
from stackyard.stacks.runs import RunState, outcome
from stackyard.system.self_update import UpdateStarted, UpdateStatus, update_outcome

if TYPE_CHECKING:
    from stackyard.agents.client import AgentClient

log = logging.getLogger(__name__)

_RUN = TypeAdapter(RunState)
_UPDATE = TypeAdapter(UpdateStatus)
#: (outcome, detail) of work that ended.
Said = tuple[str, str | None]
#: Looks at the work on the agent: how it ended, or None while it goes on.
Look = Callable[["AgentClient"], Awaitable[Said | None]]
#: How often the run is looked at, and for how long the agent may not answer.
POLL_SECONDS = 2.0
SILENCE_SECONDS = 600.0
#: Work followed at most this long.
FOLLOW_SECONDS = 24 * 3600.0

_following: set[asyncio.Task[None]] = set()


def run_end(run: RunState) -> Look:
    """How a backup or restore run ended, once it has."""

    async def look(client: AgentClient) -> Said | None:
        state = await client.get(f"/stacks/{run.stack}/run", _RUN)
        if state.id != run.id:
            return "failure", "another run replaced it on the agent before its end was seen"
        return None if state.status == "running" else outcome(state)

    return look


def update_end(started: UpdateStarted) -> Look:
    """How the agent's update by helper `started.helper` ended, once its result is there
    (the agent is away for a moment meanwhile)."""

    async def look(client: AgentClient) -> Said | None:
        last = (await client.get("/system/update", _UPDATE)).last_update
        return None if last is None or last.helper != started.helper else update_outcome(last)

    return look


def follow(
    agents: Agents, agent_id: int, look: Look, record: Callable[[str, str | None], None]
) -> None:
    """Follow work on the agent in the background; `record(outcome, detail)` at its end."""
    task = asyncio.create_task(_follow(agents, agent_id, look, record))
    _following.add(task)
    task.add_done_callback(_following.discard)


async def _follow(
    agents: Agents, agent_id: int, look: Look, record: Callable[[str, str | None], None]
) -> None:
    loop = asyncio.get_running_loop()
    began = last_answer = loop.time()
    said: Said | None
    while True:
        await asyncio.sleep(POLL_SECONDS)
        try:
            said = await look(await agents.client(agent_id, usable=False))
        except StackyardError as exc:
            if loop.time() - last_answer > SILENCE_SECONDS:
                said = "failure", f"the agent stopped answering ({exc.detail}): its end is unknown"
                break
            continue
        last_answer = loop.time()
        if said is not None:
            break
        if loop.time() - began > FOLLOW_SECONDS:
            said = "failure", "still running after a day: no longer followed"
            break
    try:
        await asyncio.to_thread(record, *said)
    except Exception:
        log.exception("The outcome of work on agent %s could not be recorded", agent_id)
