"""A zip's members deflated on every core, ahead of the zip that sends them.

stream-zip deflates each member in the thread that builds the zip, one block after the
other, and zlib-ng's compressor object holds the interpreter while it works: one core.
Here each member's bytes are deflated in blocks of `CHUNK` on a small pool of threads by
zlib-ng's parallel compressor (`_ParallelCompress`, what its own threaded gzip writer is
built on), which lets go of the interpreter while it deflates. Each block takes the last
32 KiB of the block before it as its dictionary and ends with a sync flush, so the blocks
joined, and an empty last block, are one deflate stream, compressed as well as by one
compressor (a few bytes a block more). Blocks are read ahead of the zip across members,
at most `ahead` bytes, so that a folder of many small files keeps every core busy too.

The zip stays stream-zip's: a member's method is `ZIP_AUTO`'s choice (Zip32, or Zip64
where the size or the offset needs it), given a compressor that hands over the blocks
deflated already; stream-zip reckons the CRC-32 and the sizes as it does for any member."""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from stream_zip import ZIP_32, ZIP_AUTO, Method
from zlib_ng import zlib_ng

from stackyard.files.browse import CHUNK

#: Threads that deflate one zip's blocks, at most.
MAX_WORKERS = 4
#: Items (members, blocks) read ahead of the zip, at most: each file read ahead holds a
#: descriptor open.
MAX_ITEMS_AHEAD = 64
#: The end of every member's deflate stream: an empty last block.
_LAST_BLOCK = zlib_ng.compress(b"", wbits=-zlib_ng.MAX_WBITS)
#: The deflate window: what of a block the next one may refer to.
_WINDOW = 32 * 1024
#: What one block's deflate may grow to (stored blocks of incompressible data, level 1's
#: nine-bit codes), as zlib-ng's threaded writer reckons it.
_BOUND = CHUNK + CHUNK // 8 + 500


@dataclass(frozen=True)
class Entry:
    """A member to be: a folder (`size` None, no chunks) or a file and its bytes."""

    name: str
    modified: datetime
    mode: int
    size: int | None = None
    chunks: Iterator[bytes] = field(default_factory=lambda: iter(()))


def workers() -> int:
    """Threads for one zip's deflate: the cores this process may use, at most MAX_WORKERS."""
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))


class _Deflated(Method):
    """`ZIP_AUTO`'s choice for a member of `size` bytes, deflated by the pool: stream-zip
    asks its compressor for each block as it takes the block, and gets the block's
    deflate, done meanwhile."""

    def __init__(self, size: int, level: int) -> None:
        self._auto = ZIP_AUTO(size, level=level)
        self.block: Future[tuple[bytes, int]] | None = None  # the block being taken

    def _get(self, offset: int, default_get_compressobj: Any) -> Any:
        method, upgrade, _own, size, crc = self._auto._get(offset, default_get_compressobj)
        return method, upgrade, lambda: self, size, crc

    # What stream-zip calls of a compressor.
    def compress(self, _chunk: bytes) -> bytes:
        assert self.block is not None
        return self.block.result()[0]

    def flush(self) -> bytes:
        return _LAST_BLOCK


_END = object()  # in the queue: a file member's bytes end here


class DeflatePool:
    """Deflates the members of one zip (`members`) on `threads` threads; closed with the
    zip (a download stopped halfway waits only for the blocks being deflated)."""

    def __init__(self, level: int, threads: int | None = None) -> None:
        self.level = level
        self._threads = threads or workers()
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="zip-deflate")
        self._local = threading.local()
        self._ahead = 2 * self._threads * CHUNK  # bytes read ahead of the zip, at most
        self._queue: collections.deque[Any] = collections.deque()
        self._queued = 0  # bytes of the blocks in the queue

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._queue.clear()

    def members(self, entries: Iterator[Entry]) -> Iterator[tuple[Any, ...]]:
        """stream-zip's members for `entries`, their blocks deflated ahead."""
        items = self._items(entries)
        # The first (the root folder) is not kept waiting for the reading ahead: its
        # header is the download's first bytes.
        item = next(items, None)
        while item is not None:
            entry: Entry = item
            if entry.size is None:
                yield entry.name, entry.modified, entry.mode, ZIP_32, ()
            else:
                method = _Deflated(entry.size, self.level)
                yield entry.name, entry.modified, entry.mode, method, self._blocks(items, method)
            item = self._next(items)

    def _blocks(self, items: Iterator[Any], method: _Deflated) -> Iterator[bytes]:
        while (item := self._next(items)) is not _END:
            raw, method.block = item
            yield raw

    def _items(self, entries: Iterator[Entry]) -> Iterator[Any]:
        """Entries, each file's blocks (and their deflate, sent to the pool) and its end,
        in the zip's order."""
        for entry in entries:
            yield entry
            if entry.size is None:
                continue
            previous = b""
            for chunk in entry.chunks:
                window = memoryview(previous)[-_WINDOW:]
                yield chunk, self._pool.submit(self._deflate, chunk, window)
                previous = chunk
            yield _END

    def _next(self, items: Iterator[Any]) -> Any:
        """The next item, with the queue topped up to `ahead` bytes (None at the end)."""
        while not self._queue or (
            self._queued < self._ahead and len(self._queue) < MAX_ITEMS_AHEAD
        ):
            item = next(items, None)
            if item is None:
                break
            self._queue.append(item)
            if isinstance(item, tuple):
                self._queued += len(item[0])
        if not self._queue:
            return None
        item = self._queue.popleft()
        if isinstance(item, tuple):
            self._queued -= len(item[0])
        return item

    def _deflate(self, chunk: bytes, window: memoryview) -> tuple[bytes, int]:
        compressor = getattr(self._local, "compressor", None)
        if compressor is None:
            compressor = self._local.compressor = zlib_ng._ParallelCompress(
                buffersize=_BOUND, level=self.level
            )
        result: tuple[bytes, int] = compressor.compress_and_crc(chunk, window)
        return result
