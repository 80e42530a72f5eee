"""Slows down guessing of passwords without letting an attacker lock anyone out.

Three counters of failed sign-ins, each with free attempts and then waits that double
(from `base_delay` up to `max_delay`):

- per account *and* address: the guesser is refused (429) from where they guess;
- per address, across accounts (more free attempts): spraying many accounts is refused;
- per account, across addresses: never refused. Once over, each attempt on the account
  waits `account_delay` seconds first, and the attempts from one address run one at a
  time: a distributed guesser gets about one guess per delay per address (each address
  soon refused by its own counters), while the owner, from an address of their own, waits
  only the delay, never behind the guessers' queue.

Every attempt counts as a failure from the moment it begins (`begin`), and is taken back
when it succeeds (`succeeded`): concurrent guesses count at once, so sending many
requests at the same time gets no more guesses than sending them one after another.

An address is an IPv4 address, or an IPv6 address's /64 (`source`): whoever holds one
IPv6 address usually holds its whole /64, endless addresses to guess from.

Two-factor codes have a limit of their own per account, across addresses (`CodeLimit`):
a guesser who knows the password has only a million codes to try.

The same counters, by address alone (`begin_from`), limit what an anonymous client may
start without an account to name (sign-ins at the identity provider).
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from stackyard.errors import TooManyRequests

Key = tuple[str, ...]
#: Waits stop doubling long before a float would overflow (they are capped far below).
_DOUBLINGS = 40


def source(address: str) -> str:
    """Where attempts come from, as the throttle counts them: an IPv4 address as it is, an
    IPv6 address by its /64 (an IPv4 address mapped into IPv6 as the IPv4 address)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _wait_message(what: str, seconds: float, after: str = "") -> TooManyRequests:
    whole = max(1, math.ceil(seconds))
    return TooManyRequests(
        f"{what}. Try again in {whole} second{'s' if whole != 1 else ''}{after}.", whole
    )


@dataclass
class _Failures:
    count: int
    last: float


class LoginThrottle:
    def __init__(
        self,
        free_attempts: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 900.0,
        address_factor: int = 10,
        account_factor: int = 2,
        account_delay: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 100_000,
    ) -> None:
        self.free_attempts = free_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.address_factor = address_factor
        self.account_factor = account_factor
        self.account_delay = account_delay
        self.clock = clock
        self.max_entries = max_entries
        self._failures: dict[Key, _Failures] = {}
        #: Told (account, failures) when an account's failed sign-ins reach the point where
        #: it is slowed down, once each time (notifications).
        self.attacked: Callable[[str, int], None] | None = None
        self._lock = threading.Lock()
        self._serial: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        #: Two-factor codes per account, across addresses (on this throttle's clock).
        self.codes = CodeLimit(clock=lambda: self.clock())

    @staticmethod
    def _keys(username: str, address: str | None) -> list[Key]:
        name = username.lower()
        keys: list[Key] = [("account", name)]
        if address:
            where = source(address)
            keys += [("pair", name, where), ("address", where)]
        return keys

    def _free(self, key: Key) -> int:
        factor = {"pair": 1, "address": self.address_factor, "account": self.account_factor}
        return self.free_attempts * factor[key[0]]

    def _wait(self, key: Key, now: float) -> float:
        entry = self._failures.get(key)
        if entry is None or now - entry.last > self.max_delay:
            return 0.0
        over = entry.count - self._free(key)
        if over < 0:
            return 0.0
        delay = min(self.base_delay * 2.0 ** min(over, _DOUBLINGS), self.max_delay)
        return float(max(0.0, entry.last + delay - now))

    def begin(self, username: str, address: str | None) -> float:
        """Refuse (TooManyRequests) a guesser's pair or address; otherwise count the
        attempt as failed until `succeeded` takes it back, and return the seconds it must
        wait first (0.0, or `account_delay` for an account under attack)."""
        now = self.clock()
        with self._lock:
            keys = self._keys(username, address)
            refused = max((self._wait(k, now) for k in keys if k[0] != "account"), default=0.0)
            attacked = self._wait(keys[0], now) > 0
            if refused <= 0:
                self._count(keys, now)
            failures = self._failures.get(keys[0])
            newly = failures is not None and failures.count == self._free(keys[0]) + 1
        if newly and failures is not None and self.attacked is not None:
            self.attacked(username, failures.count - 1)
        if refused > 0:
            raise _wait_message("Too many failed sign-ins", refused)
        return self.account_delay if attacked else 0.0

    def begin_from(self, address: str | None) -> None:
        """An attempt that names no account (a sign-in at the identity provider begun):
        refused (TooManyRequests) while the address waits, else counted against it until
        `succeeded_from` takes it back."""
        if not address:
            return
        key: Key = ("address", source(address))
        now = self.clock()
        with self._lock:
            refused = self._wait(key, now)
            if refused <= 0:
                self._count([key], now)
        if refused > 0:
            raise _wait_message("Too many sign-ins begun from your address", refused)

    def succeeded_from(self, address: str | None) -> None:
        """An attempt `begin_from` counted went well: it no longer counts."""
        if not address:
            return
        with self._lock:
            entry = self._failures.get(("address", source(address)))
            if entry is not None:
                entry.count = max(0, entry.count - 1)

    def serial(self, username: str, address: str | None) -> asyncio.Lock:
        """One attempt at a time per account and address on an account under attack."""
        key = f"{username.lower()}\0{source(address) if address else ''}"
        lock = self._serial.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._serial[key] = lock
        return lock

    def _count(self, keys: list[Key], now: float) -> None:
        if len(self._failures) >= self.max_entries:
            self._forget_idle(now)
        for key in keys:
            entry = self._failures.setdefault(key, _Failures(0, now))
            entry.count += 1
            entry.last = now

    def succeeded(self, username: str, address: str | None) -> None:
        """The right password: the account's and the pair's failures are forgotten, and
        this attempt no longer counts against the address."""
        name = username.lower()
        with self._lock:
            self._failures.pop(("account", name), None)
            if address:
                where = source(address)
                self._failures.pop(("pair", name, where), None)
                entry = self._failures.get(("address", where))
                if entry is not None:
                    entry.count = max(0, entry.count - 1)

    def _forget_idle(self, now: float) -> None:
        idle = [k for k, v in self._failures.items() if now - v.last > self.max_delay]
        for key in idle:
            del self._failures[key]
        if len(self._failures) >= self.max_entries:  # under attack: keep the newest half
            oldest = sorted(self._failures, key=lambda k: self._failures[k].last)
            for key in oldest[: len(oldest) // 2]:
                del self._failures[key]


#: Seconds after which a code being checked no longer holds the next one back (its
#: check cannot take that long; whatever happened to it, the account is not held).
_CHECK_TAKES_AT_MOST = 120.0


@dataclass
class _Codes:
    count: int  # codes tried since the last right one (those being checked too)
    last: float  # when the last one began or ended
    busy: bool = False  # one is being checked while the account is over its free codes


class CodeLimit:
    """Two-factor codes per account, whatever address they come from: the first
    `free_codes` freely; then one at a time, each `base_delay` seconds after the last
    ended, the wait doubling with each wrong code up to `max_delay`. A code sent before
    its time, or while another is being checked, is refused (429) without being checked.

    Never a lock-out: the owner gets in with a recovery code (never held back here: twelve
    random characters cannot be guessed), or with a code once the wait is over (at most
    `max_delay`). A guesser who knows the password gets about one code per `max_delay`,
    from however many addresses. A right code forgets the account's wrong ones; an account
    quiet for `forget_after` seconds starts afresh.

    What counts is every attempt that sends a code, judged or not by its password: the
    limit says nothing of whether the password was right."""

    def __init__(
        self,
        free_codes: int = 5,
        base_delay: float = 2.0,
        max_delay: float = 300.0,
        forget_after: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 100_000,
    ) -> None:
        self.free_codes = free_codes
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.forget_after = forget_after
        self.clock = clock
        self.max_entries = max_entries
        self._accounts: dict[str, _Codes] = {}
        self._lock = threading.Lock()

    def _due(self, entry: _Codes) -> float:
        """When the account's next code may be checked (over its free codes)."""
        over = entry.count - self.free_codes
        return entry.last + min(self.base_delay * 2.0 ** min(over, _DOUBLINGS), self.max_delay)

    def begin(self, username: str) -> None:
        """A code for `username` is about to be checked: refused (TooManyRequests) before
        its time or while another is checked, else counted as wrong until `end` says."""
        name, now = username.lower(), self.clock()
        with self._lock:
            entry = self._accounts.get(name)
            if entry is not None and now - entry.last > self.forget_after:
                entry = None
            if entry is not None and entry.count >= self.free_codes:
                wait = self._due(entry) - now
                busy = entry.busy and now - entry.last < _CHECK_TAKES_AT_MOST
                if busy or wait > 0:
                    raise _wait_message(
                        "Too many wrong codes for this account",
                        max(wait, 1.0),
                        ", or sign in with a recovery code",
                    )
            if entry is None:
                if len(self._accounts) >= self.max_entries:
                    self._forget_idle(now)
                entry = self._accounts[name] = _Codes(0, now)
            entry.count += 1
            entry.last = now
            entry.busy = entry.count > self.free_codes

    def end(self, username: str, right: bool, checked: bool = True) -> None:
        """The code `begin` let through was checked: `right` forgets the account's wrong
        codes; a wrong one stays counted, and the next waits from now. Not `checked` (the
        attempt was refused before): it no longer counts."""
        name = username.lower()
        with self._lock:
            if right:
                self._accounts.pop(name, None)
                return
            entry = self._accounts.get(name)
            if entry is None:
                return
            entry.busy = False
            if checked:
                entry.last = self.clock()
            else:
                entry.count = max(0, entry.count - 1)

    def _forget_idle(self, now: float) -> None:
        idle = [k for k, v in self._accounts.items() if now - v.last > self.forget_after]
        for key in idle:
            del self._accounts[key]
        if len(self._accounts) >= self.max_entries:  # keep the newest half
            oldest = sorted(self._accounts, key=lambda k: self._accounts[k].last)
            for key in oldest[: len(oldest) // 2]:
                del self._accounts[key]
