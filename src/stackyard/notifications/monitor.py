"""The central's looks for news nobody raises: the fleet's conditions every so often
while some channel listens (the dashboard's own payloads are judged too), a newer
Stackyard release a few times a day, and an account whose sign-ins keep failing."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

from stackyard.events import Event, Sink, clip
from stackyard.fleet.dashboard import FleetDashboard
from stackyard.notifications.service import Notifications
from stackyard.system.self_update import SelfUpdate

log = logging.getLogger(__name__)

#: Seconds between looks for a newer release.
RELEASE_EVERY = 6 * 3600.0


async def watch_fleet(
    notifications: Notifications, fleet: FleetDashboard, self_update: SelfUpdate, every: float
) -> None:
    """Until cancelled. `every` 0: the fleet is judged only when someone looks at it."""
    loop = asyncio.get_running_loop()
    release_at = loop.time() + 60.0  # (not with every start of the service)
    while True:
        await asyncio.sleep(every or 60.0)
        try:
            if not await asyncio.to_thread(notifications.channels.listening):
                continue
            if every:
                await fleet.fleet()  # judged by its observer
            if loop.time() >= release_at:
                release_at = loop.time() + RELEASE_EVERY
                await self_update.status()  # says a newer release itself
        except Exception:
            log.exception("Looking at the fleet for notifications failed")


#: The longest account name a message shows.
NAME_LENGTH = 64
#: What of an account's name is shown: no character that Markdown or HTML would read.
_INERT = re.compile(r"[^A-Za-z0-9_.@-]")


def inert(name: str) -> str:
    """`name` as a message may show it: what Markdown or HTML would read replaced by "?"
    (a link, a tag, emphasis), clipped."""
    return clip(_INERT.sub("?", name), NAME_LENGTH)


def signin_failures(
    sink: Sink, known: Callable[[str], str | None], account: str, failures: int
) -> None:
    """An account's failed sign-ins reached the point where it is slowed down. `account`
    is what a sign-in form was sent, by anyone: the message names the account only when
    `known` finds it (its stored name), else "an unknown account" (guessed names are news
    as one thing, not as many)."""
    name = known(account)
    if name is None:
        text = (
            f"{failures} failed sign-ins in a row for an unknown account (a name no account "
            "has): someone may be guessing names and passwords"
        )
        sink(Event("signin_failures", "unknown account", text))
        return
    shown = inert(name)
    text = (
        f"{failures} failed sign-ins in a row for account '{shown}': "
        "someone may be guessing its password"
    )
    sink(Event("signin_failures", f"account {shown.lower()}", text))
