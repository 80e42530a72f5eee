"""A test message through a channel, saved or not yet, and what its service answered."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

from stackyard.errors import StackyardError
from stackyard.notifications.channel_store import Channels, Reach
from stackyard.notifications.channels import ChannelKind
from stackyard.notifications.delivery import Message, deliver


@dataclass(frozen=True)
class TestResult:
    ok: bool
    detail: str


async def test_saved(channels: Channels, channel_id: int) -> TestResult:
    """Send a test message through a saved channel; the channel keeps how it went."""
    tested = await _send(await asyncio.to_thread(channels.reach, channel_id))
    await asyncio.to_thread(channels.tried, channel_id, None if tested.ok else tested.detail)
    return tested


async def test_unsaved(
    channels: Channels,
    kind: ChannelKind,
    settings: Mapping[str, str],
    secrets: Mapping[str, str],
    channel_id: int | None = None,
    name: str | None = None,
) -> TestResult:
    """Try settings not saved yet, under the name typed for them (with `channel_id`: an
    edit of that channel)."""
    reach = await asyncio.to_thread(
        channels.reach_unsaved, kind, settings, secrets, channel_id, name
    )
    return await _send(reach)


async def _send(reach: Reach) -> TestResult:
    where = reach.target()
    message = Message(
        "Stackyard: test message",
        "A test message: notifications from Stackyard reach "
        + (f"the channel {reach.name!r}." if reach.name else "this channel."),
        "info",
        {"events": [], "test": True},
    )
    try:
        await asyncio.to_thread(deliver, where, message, reach.secrets)
    except StackyardError as exc:
        return TestResult(False, exc.detail)
    return TestResult(True, "Sent: the service accepted the test message")
