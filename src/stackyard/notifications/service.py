"""Notifications on the central, put together from their parts: the intake of events and
of what the fleet sees (`intake`), the outbox and the dispatcher that sends it
(`outbox`, `dispatcher`), the channels with their sealed secrets (`channel_store`), the
rules (`rules`), tests of a channel (`trials`) and the history (`history`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from stackyard.db.engine import Database
from stackyard.errors import Invalid
from stackyard.events import Event
from stackyard.fleet.dashboard import Fleet
from stackyard.notifications.channel_store import Channels
from stackyard.notifications.dispatcher import Dispatcher
from stackyard.notifications.intake import Intake
from stackyard.notifications.outbox import Timing
from stackyard.notifications.rules import Rules, RuleSpec, RuleView

#: The stacks on the hosts a rule covers (agent ids, 0 for this host; none: every host),
#: and whether every one of them answered.
KnownStacks = Callable[[tuple[int, ...]], Awaitable[tuple[set[str], bool]]]


class Notifications:
    def __init__(
        self,
        db: Database,
        secret_key: str,
        timing: Timing | None = None,
        base_url: str | None = None,
        host_name: Callable[[], str] = lambda: "",
    ) -> None:
        """`host_name`: the central's own host's name (blocking: asked in a thread)."""
        self.db = db
        self.timing = timing or Timing()
        self.base_url = base_url
        self.channels = Channels(db, secret_key)
        self.rules = Rules(db)
        self.dispatcher = Dispatcher(
            db, self.channels.target_of, self.timing, lambda: self.base_url
        )
        self.intake = Intake(
            db, self.timing.gather, self.channels.listening, self.dispatcher.wake, host_name
        )
        #: How a rule's stack names are checked (set by the composition root; None: not).
        self.known_stacks: KnownStacks | None = None

    async def save_rule(self, spec: RuleSpec, rule_id: int | None = None) -> RuleView:
        """Add a rule (`rule_id` None) or change one. A stack it names must be on a host it
        covers: refused when every such host answered and none has it (a host that did
        not answer may have it, so its names are taken then)."""
        if spec.stacks and self.known_stacks is not None:
            names, complete = await self.known_stacks(spec.hosts)
            unknown = [stack for stack in spec.stacks if stack not in names]
            if unknown and complete:
                which = ", ".join(sorted(names)[:30]) or "none"
                raise Invalid(
                    f"No stack named {unknown[0]!r} on the hosts this rule covers "
                    f"(their stacks: {which})"
                )
        if rule_id is None:
            return await asyncio.to_thread(self.rules.create, spec)
        return await asyncio.to_thread(self.rules.update, rule_id, spec)

    def emit(self, event: Event) -> None:
        """Queue `event` (from any thread; returns at once)."""
        self.intake.emit(event)

    def observe(self, fleet: Fleet) -> None:
        """What the fleet sees now (judged in order, off the loop)."""
        self.intake.observe(fleet)

    async def serve(self) -> None:
        """Take what arrives into the outbox and send it, until cancelled."""
        await asyncio.to_thread(self.rules.ensure_defaults)
        await asyncio.to_thread(self.channels.seal_settings)
        tasks = [
            asyncio.create_task(self.intake.serve()),
            asyncio.create_task(self.dispatcher.serve()),
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await task
            await self.dispatcher.aclose()
