"""A tar stream split into its metadata and its data, and joined back byte for byte.

Stored as it is, a tar interleaves each file's header with its contents: a file changed
in place changes its header too (its time), so a repository that deduplicates by
content-defined chunks stores the chunk around each such header again besides the chunk
of the change. Split, the contents of all files run on one after another (the data) and
the headers, extended headers and end blocks go apart (the metadata, a few hundred
bytes a file): a change costs the chunks of the change, and the metadata, which is small,
is stored anew whole.

The split follows the tar's framing: a 512-byte header block, then its entry's bytes
(its size, from the header or a preceding PAX `size` record, rounded up to blocks).
Extended headers' bytes (PAX `x`/`g`, GNU long names `L`/`K`) are metadata; every other
entry's are data. The join reads the metadata and makes the same decisions, taking each
entry's bytes from the data: whatever the tar holds, the joined stream is the split one
(and a repository checks it against the SHA-256 it kept)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

BLOCK = 512
#: Entry types whose bytes are metadata.
_EXTENDED = frozenset(b"xgLK")
#: Extended headers larger than this are not read for a `size` record (kept as they are).
_MAX_RECORDS = 1024 * 1024


def _size(header: bytes) -> int:
    """The size field of a header block (octal, or GNU's base-256)."""
    field = header[124:136]
    if field[0] & 0x80:
        value = field[0] & 0x7F
        for byte in field[1:]:
            value = (value << 8) | byte
        return value
    text = field.split(b"\0", 1)[0].strip()
    try:
        return int(text or b"0", 8)
    except ValueError:
        return 0


def _pax_size(records: bytes) -> int | None:
    """A PAX extended header's `size` record, if it has one."""
    found = None
    at = 0
    while at < len(records):
        space = records.find(b" ", at)
        if space < 0:
            break
        try:
            length = int(records[at:space])
        except ValueError:
            break
        if length <= 0:
            break
        key, _, value = records[space + 1 : at + length - 1].partition(b"=")
        if key == b"size":
            try:
                found = int(value)
            except ValueError:
                found = None
        at += length
    return found


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


class _Framing:
    """The decisions both sides make from the metadata alone: after each header, how
    many bytes its entry has and whether they are metadata."""

    def __init__(self) -> None:
        self._pax_size: int | None = None

    def entry(self, header: bytes) -> tuple[int, bool]:
        """(bytes of the entry after `header`, whether they are metadata)."""
        if not any(header):
            return 0, True  # an end block
        kind = header[156]
        size = _size(header)
        if kind in _EXTENDED:
            return _padded(size), True
        if self._pax_size is not None:
            size, self._pax_size = self._pax_size, None
        return _padded(size), False

    def extended(self, header: bytes, records: bytes) -> None:
        """An extended header's bytes were read: its `size` record is the next entry's."""
        if header[156] == ord("x") and len(records) <= _MAX_RECORDS:
            self._pax_size = _pax_size(records)


class Splitter:
    """Feed it a tar stream's chunks; each gives back (metadata, data) bytes."""

    def __init__(self) -> None:
        self._framing = _Framing()
        self._pending = bytearray()  # a header block, or an extended header's bytes
        self._header = b""
        self._left = 0  # bytes of the current entry still to come
        self._meta = True  # where they go

    def feed(self, chunk: bytes) -> tuple[bytes, bytes]:
        meta, data = bytearray(), bytearray()
        view = memoryview(chunk)
        while view:
            if self._left:
                take = view[: self._left]
                view = view[len(take) :]
                self._left -= len(take)
                if not self._meta:
                    data += take
                    continue
                meta += take
                if len(self._pending) < _MAX_RECORDS + BLOCK:
                    self._pending += take
                if not self._left:
                    self._framing.extended(self._header, bytes(self._pending))
                    self._pending.clear()
                continue
            take = view[: BLOCK - len(self._pending)]
            view = view[len(take) :]
            self._pending += take
            if len(self._pending) < BLOCK:
                continue
            header = bytes(self._pending)
            self._pending.clear()
            meta += header
            self._header = header
            self._left, self._meta = self._framing.entry(header)
        return bytes(meta), bytes(data)

    def finish(self) -> bytes:
        """What is left (a stream cut short mid-header): metadata."""
        rest = bytes(self._pending) if not self._left else b""
        self._pending.clear()
        return rest


def joined(
    read_meta: Callable[[int], bytes], read_data: Callable[[int], bytes], meta_size: int
) -> Iterator[bytes]:
    """The tar stream again, in pieces, from its metadata (`meta_size` bytes, read with
    `read_meta(n)`) and its data (read with `read_data(n)`)."""
    framing = _Framing()
    left = meta_size
    while left > 0:
        header = read_meta(min(BLOCK, left))
        left -= len(header)
        yield header
        if len(header) < BLOCK:
            return
        size, is_meta = framing.entry(header)
        if is_meta:
            records = bytearray()
            size = min(size, left)
            left -= size
            while size:
                piece = read_meta(min(size, 1024 * 1024))
                if not piece:
                    raise ValueError("the metadata ends before it says")
                yield piece
                size -= len(piece)
                if len(records) < _MAX_RECORDS + BLOCK:
                    records += piece
            framing.extended(header, bytes(records))
            continue
        while size:
            piece = read_data(min(size, 1024 * 1024))
            if not piece:
                raise ValueError("the data ends before the metadata says")
            yield piece
            size -= len(piece)
