"""The outcome of work a user started on an agent, audited on the central when it ends.

An agent relays an entry "started" for a backup or restore it accepted (its audit goes
back with the answer, and the work outlives the answer). The central records that, and
follows the run on the agent until it ends, then records the outcome under the same
user: the central decides what it records, from the run's state as the agent serves it
(a run of another id, or an agent that stops answering, is recorded as such, never as a
success). Followed in this process only: a central restarted meanwhile records the start
and not the end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pydantic import TypeAdapter

from stackyard.agents.service import Agents
from stackyard.errors import StackyardError
from stackyard.stacks.runs import RunState, outcome

log = logging.getLogger(__name__)

_RUN = TypeAdapter(RunState)
#: How often the run is looked at, and for how long the agent may not answer.
POLL_SECONDS = 2.0
SILENCE_SECONDS = 600.0
#: Work followed at most this long.
FOLLOW_SECONDS = 24 * 3600.0

_following: set[asyncio.Task[None]] = set()


def follow(
    agents: Agents, agent_id: int, run: RunState, record: Callable[[str, str | None], None]
) -> None:
    """Follow `run` on the agent in the background; `record(outcome, detail)` at its end."""
    task = asyncio.create_task(_follow(agents, agent_id, run, record))
    _following.add(task)
    task.add_done_callback(_following.discard)


async def _follow(
    agents: Agents, agent_id: int, run: RunState, record: Callable[[str, str | None], None]
) -> None:
    loop = asyncio.get_running_loop()
    began = last_answer = loop.time()
    said: tuple[str, str | None]
    while True:
        await asyncio.sleep(POLL_SECONDS)
        try:
            client = await agents.client(agent_id, usable=False)
            state = await client.get(f"/stacks/{run.stack}/run", _RUN)
        except StackyardError as exc:
            if loop.time() - last_answer > SILENCE_SECONDS:
                said = "failure", f"the agent stopped answering ({exc.detail}): its end is unknown"
                break
            continue
        last_answer = loop.time()
        if state.id != run.id:
            said = "failure", "another run replaced it on the agent before its end was seen"
            break
        if state.status != "running":
            said = outcome(state)
            break
        if loop.time() - began > FOLLOW_SECONDS:
            said = "failure", "still running after a day: no longer followed"
            break
    try:
        await asyncio.to_thread(record, *said)
    except Exception:
        log.exception("The outcome of run %s on agent %s could not be recorded", run.id, agent_id)
