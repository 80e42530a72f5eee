"""Notifications from an event to a channel's receiver, against a real `stackyard serve`,
a stand-in agent whose event stream the central follows as it follows a real agent's
(served by this bench: it writes each event's line when the bench says and notes when),
and loopback HTTP receivers that note when each request arrived.

1. Event to delivered: `BENCH_NOTIFY_EVENTS` (default 40) `container_exited` events
   raised by the stand-in agent at random exponential gaps (mean 3 s, a fixed seed: the
   run takes about two minutes), each delivered to a webhook channel (our JSON webhook)
   and to an Apprise `json://` channel at once. Measured, with nothing subtracted, from
   the stand-in writing the event's line to the receiver reading the request: median and
   p99 per channel (goal: median < 1 s, p99 < 3 s). The gaps are much shorter than a real
   host's (its events are minutes apart); a channel has three sends to spare and earns
   one more every 2 s (`STACKYARD_NOTIFY_WINDOW_SECONDS`), so an event waits for a
   digest only when several came within a few seconds: that is what the p99 shows;
   bursts are item 2.
2. A burst of 1,000 events written at once: per channel, how many messages carried them
   (digests of at most 50 events), none lost and none duplicated (the distinct subjects
   in the receiver's bodies), the time from the burst's first line to the last message,
   and the service's peak RSS growth during the burst (its baseline taken after item 1,
   so with Apprise loaded; goal < 32 MiB).
3. The work that raises events is not slowed: a small stack (one `stackyard-test/helper:1`
   service, a named volume of 50 MiB in 50 files, half random, half text) backed up
   through the API `BENCH_NOTIFY_BACKUPS` (default 5) times without any channel, and as
   often with a rule sending `backup_succeeded` to a webhook channel whose receiver
   answers after 5 s. In both conditions the stand-in agent raises a `backup_succeeded`
   just before the backup; with the slow channel the bench starts the backup once that
   event's delivery is held by the receiver, so a slow delivery is under way during every
   timed backup, and the backup's own event goes to the slow channel as well. Baseline:
   the same backups without a channel; goal: the ratio <= 1.02 (printed as the ratio of
   the medians; the goal line judges it round by round, each round one backup of each
   condition). The conditions take turns (ABBA), each backup after a `sync`, and after
   each backup with the channel the bench waits until its deliveries have been sent, so
   that the next backup starts with nothing under way.

The central also watches its own Docker engine, where other work on this machine starts
and stops containers: so that those events do not open a channel's digest window in the
middle of a measure, the default rules are narrowed to the stand-in's host (items 1 and
2) or removed (item 3, where only the rule sending `backup_succeeded` to the slow channel
is left). Whatever else reaches a receiver is counted apart ("other messages").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import secrets
import shutil
import statistics
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from tests.support.receivers import HttpReceiver, Received

from bench.common import (
    VENV_BIN,
    RssPeak,
    Started,
    admin_token,
    free_port,
    goal,
    stackyard_env,
    start,
    wait_succeeded,
    workdir,
)
from bench.standins import HEALTH, host_report

EVENTS = int(os.environ.get("BENCH_NOTIFY_EVENTS", "40"))
MEAN_GAP = 3.0
BURST = 1000
BACKUPS = int(os.environ.get("BENCH_NOTIFY_BACKUPS", "5"))
SLOW = 5.0  # seconds the slow channel's receiver takes to answer
AGENT = "standin-events"
HELPER = "stackyard-test/helper:1"
KEEPALIVE = 15.0
DIGEST_SIZE = 50
#: The goals (issue 24): event to delivered (median, p99), the burst's RSS growth, and the
#: backups with a slow channel over those without.
MEDIAN_GOAL, P99_GOAL, BURST_RSS_GOAL, SLOWED_GOAL = 1.0, 3.0, 32, 1.02
FILL = """
cd /data
i=0
while [ $i -lt 25 ]; do
  head -c 1048576 /dev/urandom > r$i
  yes "a line of text for a compressible file, number $i" | head -c 1048576 > t$i
  i=$((i+1))
done
"""
#: The subject of a container event of the stand-in's, as its text names it too.
SUBJECT = re.compile(r"\b((?:lat|burst)\d{4}-web-1)\b")
DIGEST_TITLE = re.compile(r"Stackyard: \d+ events")


def _report() -> bytes:
    """A healthy host's report (nothing to notify of), for the central's fleet looks."""
    report = json.loads(host_report(0))
    report.update(name=AGENT, partial=[], troubles=[], updates=[])
    report["stacks"] = {"running": 20, "partial": 0, "stopped": 0, "invalid": 0}
    return json.dumps(report).encode()


def _event(name: str, subject: str, text: str, stack: str | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "subject": subject,
        "text": text,
        "state": secrets.token_hex(8),  # an occurrence: its own
        "stack": stack,
        "severity": None,
        "ended": False,
    }


def _exited(prefix: str, n: int) -> dict[str, Any]:
    container = f"{prefix}{n:04d}-web-1"
    return _event("container_exited", container, f"Container {container} exited with code 137")


class EventAgent:
    """A stand-in agent on loopback (an asyncio loop in a thread): `/agent/health` and
    `/agent/fleet/host` answered like a healthy agent's, `/agent/notifications/events` a
    stream of JSON lines as a real agent serves it (a keep-alive first and every 15 s
    when quiet, the events after `after` of this start, then each as it comes). `emit`
    queues events from any thread; `written` says when each subject's line was written."""

    def __init__(self) -> None:
        self.boot = secrets.token_hex(8)
        self.events: list[dict[str, Any]] = []  # number n is events[n - 1]
        self.asked: Counter[str] = Counter()
        self.streams = 0  # open event streams
        self._written: dict[str, float] = {}
        self._wakes: set[asyncio.Event] = set()
        self._report = _report()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._listen(), self.loop).result()
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._serve, "127.0.0.1", 0)

    def emit(self, events: list[dict[str, Any]]) -> None:
        self.loop.call_soon_threadsafe(self._add, events)

    def _add(self, events: list[dict[str, Any]]) -> None:
        self.events.extend(events)
        for wake in self._wakes:
            wake.set()

    def written(self) -> dict[str, float]:
        """Subject -> perf_counter() when its line was first written."""
        return dict(self._written)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                url = urlsplit(head.split(b" ", 2)[1].decode())
                self.asked[url.path] += 1
                if url.path == "/agent/notifications/events":
                    query = parse_qs(url.query)
                    after = int(query.get("after", ["0"])[0])
                    await self._stream(writer, after, query.get("boot", [None])[0])
                    return
                if url.path == "/agent/health":
                    status, body = "200 OK", HEALTH
                elif url.path == "/agent/fleet/host":
                    status, body = "200 OK", self._report
                else:
                    status, body = "404 Not Found", b'{"detail": "Not Found"}'
                writer.write(
                    f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def _line(self, writer: asyncio.StreamWriter, seq: int, event: dict[str, Any] | None) -> None:
        line = json.dumps({"boot": self.boot, "seq": seq, "event": event}).encode() + b"\n"
        writer.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")  # one chunk a line

    async def _stream(self, writer: asyncio.StreamWriter, after: int, boot: str | None) -> None:
        seq = after if boot == self.boot else 0
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        self._line(writer, seq, None)
        await writer.drain()
        wake = asyncio.Event()
        self._wakes.add(wake)
        self.streams += 1
        try:
            while True:
                wake.clear()
                fresh = self.events[seq:]
                for event in fresh:
                    seq += 1
                    self._written.setdefault(event["subject"], time.perf_counter())
                    self._line(writer, seq, event)
                if fresh:
                    await writer.drain()
                    continue
                try:
                    await asyncio.wait_for(wake.wait(), KEEPALIVE)
                except TimeoutError:
                    self._line(writer, seq, None)
                    await writer.drain()
        finally:
            self.streams -= 1
            self._wakes.discard(wake)

    def stop(self) -> None:
        async def close() -> None:
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class Receiver(HttpReceiver):
    """An `HttpReceiver` that also notes when each request arrived (perf_counter, taken
    once the request was read whole)."""

    def __init__(self) -> None:
        self._arrivals: list[tuple[float, Received]] = []
        self._noted = threading.Lock()
        super().__init__()

    def _answer(self, received: Received) -> Any:
        with self._noted:
            self._arrivals.append((time.perf_counter(), received))
        return super()._answer(received)

    def arrivals(self) -> list[tuple[float, Received]]:
        with self._noted:
            return list(self._arrivals)

    def clear(self) -> None:
        with self._noted:
            self._arrivals.clear()
        super().clear()


def webhook_subjects(received: Received) -> list[str]:
    """The subjects of the stand-in's events a webhook message carries."""
    events = received.json().get("events") or []
    return [e["subject"] for e in events if e.get("host") == AGENT]


def apprise_subjects(received: Received) -> list[str]:
    """The same of an Apprise json:// message: its title (one event) or the lines of its
    digest ("- [host] Title: text")."""
    body = received.json()
    title, message = body.get("title") or "", body.get("message") or ""
    if DIGEST_TITLE.fullmatch(title):
        lines = [line for line in message.splitlines() if line.startswith(f"- [{AGENT}] ")]
    elif title.startswith(f"Stackyard: [{AGENT}] "):
        lines = [title]
    else:
        lines = []
    return [m.group(1) for line in lines if (m := SUBJECT.search(line))]


Reader = Callable[[Received], list[str]]


def carried(receiver: Receiver, read: Reader, prefix: str) -> list[tuple[float, list[str]]]:
    """Each message (arrival time, its subjects) carrying subjects that start with
    `prefix`, oldest first."""
    out = []
    for at, received in receiver.arrivals():
        subjects = [s for s in read(received) if s.startswith(prefix)]
        if subjects:
            out.append((at, subjects))
    return out


def others(receiver: Receiver, read: Reader) -> int:
    """Messages carrying none of the stand-in's events (the central's own host's)."""
    return sum(not read(received) for _, received in receiver.arrivals())


def _until(done: Callable[[], bool], timeout: float, what: str, every: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout:g} s")
        time.sleep(every)


def percentile(values: list[float], q: float) -> float:
    """The `q` quantile (0..1), interpolated between the nearest ranks."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def _service(folder: Path, **extra: str) -> tuple[Started, httpx.Client]:
    env = stackyard_env(folder)
    env.update(extra)
    (folder / "stacks").mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = start(
        [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
    )
    token = admin_token(folder, env)
    http = httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
    )
    return server, http


def _channel(http: httpx.Client, body: dict[str, Any]) -> int:
    made = http.post("/api/notifications/channels", json=body)
    made.raise_for_status()
    return int(made.json()["id"])


def _add_agent(http: httpx.Client, agent: EventAgent) -> int:
    made = http.post("/api/agents", json={"name": AGENT, "url": agent.url, "token": "t" * 40})
    made.raise_for_status()
    _until(lambda: agent.streams > 0, 60, "the central following the stand-in's events")
    return int(made.json()["id"])


def _narrow_rules(http: httpx.Client, agent_id: int | None) -> None:
    """The default rules narrowed to the stand-in's host (`agent_id`), or deleted (None)."""
    for rule in http.get("/api/notifications/rules").json():
        if rule["name"] == "backups":
            continue
        if agent_id is None:
            http.delete(f"/api/notifications/rules/{rule['id']}").raise_for_status()
        else:
            body = {k: rule[k] for k in ("name", "enabled", "events", "min_severity", "stacks")}
            http.put(
                f"/api/notifications/rules/{rule['id']}", json=body | {"hosts": [agent_id]}
            ).raise_for_status()


def _runs(values: list[int]) -> str:
    """`values` with repeats shown once: "1, 50x19, 49"."""
    runs = [(v, len(list(same))) for v, same in itertools.groupby(values)]
    return ", ".join(f"{v}x{n}" if n > 1 else str(v) for v, n in runs)


def delivery() -> None:
    """Items 1 and 2, on one service: one webhook and one Apprise channel."""
    folder = workdir()
    agent = EventAgent()
    hook, json_hook = Receiver(), Receiver()
    server = None
    try:
        server, http = _service(folder)
        channels = {
            "webhook": _channel(
                http,
                {"name": "hook", "kind": "webhook", "settings": {"url": f"{hook.url}/hook"}},
            ),
            "apprise": _channel(
                http,
                {
                    "name": "apprise-json",
                    "kind": "apprise",
                    "secrets": {"url": f"json://127.0.0.1:{json_hook.port}/hook"},
                },
            ),
        }
        for name, channel in channels.items():  # (loads Apprise and httpx in the service)
            tested = http.post(f"/api/notifications/channels/{channel}/test").json()
            if not tested.get("ok"):
                raise RuntimeError(f"the {name} channel's test failed: {tested}")
        hook.wait_for(1)
        json_hook.wait_for(1)
        hook.clear()
        json_hook.clear()
        _narrow_rules(http, _add_agent(http, agent))
        receivers: dict[str, tuple[Receiver, Reader]] = {
            "webhook": (hook, webhook_subjects),
            "apprise json://": (json_hook, apprise_subjects),
        }

        # 1. Event to delivered, one event at a time.
        rng = random.Random(20260611)
        gaps = [rng.expovariate(1 / MEAN_GAP) for _ in range(EVENTS)]
        time.sleep(3)  # (quiet: past any window)
        began = time.perf_counter()
        at = began
        for n, gap in enumerate(gaps):
            at += gap
            time.sleep(max(0.0, at - time.perf_counter()))
            agent.emit([_exited("lat", n)])
        for name, (receiver, read) in receivers.items():
            _until(
                lambda r=receiver, f=read: (
                    len({s for _, ss in carried(r, f, "lat") for s in ss}) >= EVENTS
                ),
                30,
                f"every event at the {name} receiver",
            )
        written = agent.written()
        print(
            f"event to delivered: {EVENTS} container_exited events from an agent, exponential "
            f"gaps (mean {statistics.mean(gaps):.1f} s, {sum(gaps):.0f} s in all; "
            f"{sum(g < 2 for g in gaps[1:])} of them under the 2 s digest window)",
            flush=True,
        )
        for name, (receiver, read) in receivers.items():
            messages = carried(receiver, read, "lat")
            first: dict[str, float] = {}
            for arrived, subjects in messages:
                for subject in subjects:
                    first.setdefault(subject, arrived)
            latency = [first[s] - written[s] for s in first]
            median, p99 = statistics.median(latency), percentile(latency, 0.99)
            print(
                f"  {name}: median {median:.2f} s, p99 {p99:.2f} s, max {max(latency):.2f} s, "
                f"min {min(latency):.2f} s | {len(messages)} messages, "
                f"{sum(len(s) > 1 for _, s in messages)} of them digests",
                flush=True,
            )
            # One figure each of the whole series (not a value per event: the best of
            # those would be the quickest event, not the median of a quiet run).
            goal(f"{name}: event to delivered, median", [median], MEDIAN_GOAL, " s")
            goal(f"{name}: event to delivered, p99", [p99], P99_GOAL, " s")

        # 2. A burst.
        time.sleep(3)
        for receiver, _ in receivers.values():
            receiver.clear()
        rss = RssPeak(server.process.pid)
        agent.emit([_exited("burst", n) for n in range(BURST)])
        for name, (receiver, read) in receivers.items():
            _until(
                lambda r=receiver, f=read: (
                    len({s for _, ss in carried(r, f, "burst") for s in ss}) >= BURST
                ),
                120,
                f"the whole burst at the {name} receiver",
            )
        time.sleep(3)  # (anything sent twice would come now)
        growth = rss.growth()
        written = agent.written()
        first_line = min(t for s, t in written.items() if s.startswith("burst"))
        last_line = max(t for s, t in written.items() if s.startswith("burst"))
        print(
            f"burst of {BURST} events (written in {(last_line - first_line) * 1000:.0f} ms): "
            f"service RSS growth {growth:.1f} MiB",
            flush=True,
        )
        goal(f"burst of {BURST} events: service RSS peak growth", [growth], BURST_RSS_GOAL, " MiB")
        for name, (receiver, read) in receivers.items():
            messages = carried(receiver, read, "burst")
            every = [s for _, subjects in messages for s in subjects]
            distinct = len(set(every))
            sizes = [len(s) for _, s in messages]
            print(
                f"  {name}: {len(messages)} messages (events in each, in order: {_runs(sizes)}; "
                f"at least {-(-BURST // DIGEST_SIZE)} needed) | {distinct} distinct events, "
                f"{BURST - distinct} lost, {len(every) - distinct} duplicated | last arrived "
                f"{messages[-1][0] - first_line:.2f} s after the first line",
                flush=True,
            )
        print(
            f"  other messages (events of the central's own host): "
            f"{', '.join(f'{n} {others(r, f)}' for n, (r, f) in receivers.items())} "
            f"| the stand-in was asked {dict(agent.asked)}",
            flush=True,
        )
    finally:
        if server is not None:
            server.stop()
        agent.stop()
        hook.close()
        json_hook.close()
        shutil.rmtree(folder, ignore_errors=True)


def _sync() -> None:
    subprocess.run(["sync"], check=True)


def _backup(http: httpx.Client, stack: str) -> float:
    """One backup of `stack` through the API, timed from a `sync` on; its archive goes."""
    _sync()
    began = time.perf_counter()
    http.post(f"/api/stacks/{stack}/backups", json={}).raise_for_status()
    wait_succeeded(http, stack, every=0.02)
    seconds = time.perf_counter() - began
    for archive in http.get("/api/backups").json():
        http.delete(f"/api/backups/{archive['name']}").raise_for_status()
    return seconds


def _settled(http: httpx.Client, channel: int, sent: int) -> None:
    """Until `sent` backup_succeeded deliveries of the channel were sent, none pending."""

    def done() -> bool:
        rows = http.get(
            f"/api/notifications/channels/{channel}/deliveries", params={"limit": 200}
        ).json()
        count = sum(r["event"] == "backup_succeeded" and r["status"] == "sent" for r in rows)
        return count >= sent and not any(r["status"] == "pending" for r in rows)

    _until(done, 60, "the slow channel's deliveries", every=0.2)


def backups() -> None:
    """Item 3: backups with and without a slow channel."""
    folder = workdir()
    stack = f"ntbench-{uuid.uuid4().hex[:6]}"
    (folder / "stacks" / stack).mkdir(parents=True)
    (folder / "stacks" / stack / "compose.yaml").write_text(
        f"services:\n  app:\n    image: {HELPER}\n    command: sleep 3600\n"
        "    volumes: ['data:/data']\nvolumes:\n  data:\n"
    )
    volume = f"{stack}_data"
    agent = EventAgent()
    slow = Receiver()
    slow.delay = SLOW
    server = None
    try:
        subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
        subprocess.run(
            ["docker", "run", "--rm", "-v", f"{volume}:/data", HELPER, "sh", "-c", FILL],
            check=True,
            capture_output=True,
        )
        server, http = _service(folder, BACKUP_HELPER_IMAGE=HELPER, STACKYARD_BACKUP_LEVEL="1")
        channel = _channel(
            http,
            {
                "name": "slow",
                "kind": "webhook",
                "settings": {"url": f"{slow.url}/slow"},
                "enabled": False,
            },
        )
        http.post(
            "/api/notifications/rules",
            json={"name": "backups", "events": ["backup_succeeded"], "channels": [channel]},
        ).raise_for_status()
        _add_agent(http, agent)
        _narrow_rules(http, None)
        _backup(http, stack)  # (a first one, untimed: the helper and the caches warm)

        times: dict[bool, list[float]] = {False: [], True: []}
        primes = 0
        for n in range(BACKUPS):
            for with_channel in (False, True) if n % 2 == 0 else (True, False):
                http.patch(
                    f"/api/notifications/channels/{channel}", json={"enabled": with_channel}
                ).raise_for_status()
                subject = f"prime{primes:04d}"
                primes += 1
                agent.emit(
                    [_event("backup_succeeded", subject, "Backup succeeded", stack=f"app{n}")]
                )
                if with_channel:  # its delivery held by the slow receiver, then the backup
                    _until(
                        lambda s=subject: any(s in webhook_subjects(r) for _, r in slow.arrivals()),
                        30,
                        "the slow channel's first event",
                    )
                else:
                    time.sleep(0.4)  # (as long as that takes)
                times[with_channel].append(_backup(http, stack))
                if with_channel:
                    _settled(http, channel, 2 * len(times[True]))
        own = sum(
            e.get("name") == "backup_succeeded" and e.get("stack") == stack
            for _, r in slow.arrivals()
            for e in r.json().get("events") or []
        )
        plain, slowed = statistics.median(times[False]), statistics.median(times[True])
        ratio = slowed / plain
        print(
            f"backup of a 50 MiB volume: with a slow channel (answers after {SLOW:g} s; a "
            f"delivery under way during each backup) {slowed:.2f} s | without a channel "
            f"{plain:.2f} s | ratio {ratio:.3f} (medians of {BACKUPS}) | without "
            f"{', '.join(f'{t:.2f}' for t in times[False])}; with "
            f"{', '.join(f'{t:.2f}' for t in times[True])} | the backups' own events at the "
            f"slow receiver: {own} of {BACKUPS}",
            flush=True,
        )
        goal(
            "backup 50 MiB with a slow channel / without",
            [a / b for a, b in zip(times[True], times[False], strict=True)],
            SLOWED_GOAL,
            "x",
        )
    finally:
        if server is not None:
            server.stop()
        agent.stop()
        slow.close()
        with contextlib.suppress(OSError):
            subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def run() -> None:
    delivery()
    backups()


if __name__ == "__main__":
    run()
