"""Which archives a schedule's retention lets go.

The rule keeps the newest N archives and, optionally, the newest archive of each of the
last D days, W ISO weeks and M months that have one (restic's `--keep-daily` reading:
periods without a backup do not count, so a missed day never costs an older archive).
It is applied per stack, per host and per place (the local folder or one destination),
and only to names this service gave (`backups.names`): a file someone else put there is
never a candidate. The newest archive is always kept, so the rule never deletes them all.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from datetime import datetime

from stackyard.backups.names import ArchiveName, parse_archive_name
from stackyard.errors import Invalid

MAX_KEEP = 10_000


@dataclass(frozen=True)
class Retention:
    keep_last: int = 7
    daily: int = 0
    weekly: int = 0
    monthly: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.keep_last <= MAX_KEEP:
            raise Invalid(f"Keep the newest 1 to {MAX_KEEP} archives (keep_last)")
        for tier in ("daily", "weekly", "monthly"):
            if not 0 <= getattr(self, tier) <= MAX_KEEP:
                raise Invalid(f"{tier} must be 0 to {MAX_KEEP}")


_TIERS: tuple[tuple[str, Callable[[datetime], Hashable]], ...] = (
    ("daily", lambda at: at.date()),
    ("weekly", lambda at: tuple(at.isocalendar())[:2]),
    ("monthly", lambda at: (at.year, at.month)),
)


def to_prune(names: Iterable[str], stack: str, host: str, rule: Retention) -> list[str]:
    """The names of `stack`'s archives made on `host` that `rule` lets go, oldest first.
    Every other name in `names` (other stacks, other hosts, foreign files) is left out."""
    mine = [
        parsed
        for parsed in map(parse_archive_name, names)
        if parsed is not None and parsed.stack == stack and parsed.host == host
    ]
    return [a.name for a in _drop(mine, rule)]


def _drop(archives: list[ArchiveName], rule: Retention) -> list[ArchiveName]:
    newest_first = sorted(archives, key=lambda a: (a.at, a.seq), reverse=True)
    keep = {a.name for a in newest_first[: rule.keep_last]}
    for tier, period_of in _TIERS:
        periods: set[Hashable] = set()
        for archive in newest_first:
            period = period_of(archive.at)
            if period in periods:
                continue
            if len(periods) == getattr(rule, tier):
                break
            periods.add(period)
            keep.add(archive.name)
    return [a for a in reversed(newest_first) if a.name not in keep]
