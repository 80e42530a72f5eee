"""Reading a tar stream's entries as its chunks go by, without copying its data.

A capture hands every chunk on to the compressor as it comes and to this scanner, which
looks only at headers (512-byte blocks, plus the PAX and GNU records that carry long
names, link targets and large sizes) and skips file data by arithmetic: counting entries
and checking each one (`stackyard.backups.archive.check_entry`) costs next to nothing
beside the copy. A stream that ends before its end-of-archive blocks is cut short.
"""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field

from stackyard.errors import Invalid

BLOCK = 512
_EXTENDED = {tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK}
#: The PAX records of GNU tar's sparse files (format 1.0) that name the file, and of a
#: file capability (which, like setuid, gives whoever runs the file privileges).
_SPARSE_NAME = "GNU.sparse.name"
_CAPABILITY = "SCHILY.xattr.security.capability"
#: Extended headers larger than this are refused (long names are a few kilobytes).
MAX_EXTENDED = 1024 * 1024
#: Special entries named at most (a tar of /dev has hundreds).
MAX_SPECIAL = 100


def _number(text: str) -> int:
    try:
        return int(text)
    except ValueError as exc:
        raise Invalid("A tar in the archive has a damaged size") from exc


def _pax_records(data: bytes) -> dict[str, str]:
    """`<length> <key>=<value>\\n` records (POSIX.1-2001)."""
    records: dict[str, str] = {}
    offset = 0
    while offset < len(data):
        space = data.find(b" ", offset)
        if space < 0:
            break
        try:
            length = int(data[offset:space])
        except ValueError as exc:
            raise Invalid("A tar in the archive has a damaged extended header") from exc
        if length <= 0:
            break
        record = data[space + 1 : offset + length - 1]
        key, _, value = record.partition(b"=")
        records[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        offset += length
    return records


@dataclass
class TarScanner:
    """Feed it the stream (`feed`), then `finish`; `on_entry` sees each entry."""

    on_entry: Callable[[tarfile.TarInfo], None]
    entries: int = 0
    files: int = 0
    data_bytes: int = 0
    ended: bool = False
    first: tarfile.TarInfo | None = None
    #: Device nodes, setuid/setgid files and files with capabilities (the first
    #: `MAX_SPECIAL` of them).
    special: list[str] = field(default_factory=list)
    _skip: int = 0
    _header: bytearray = field(default_factory=bytearray)
    _collect: int = 0
    _collect_pad: int = 0
    _collecting: bytes | None = None
    _extended: bytearray = field(default_factory=bytearray)
    _pending: dict[str, str] = field(default_factory=dict)
    _zeros: int = 0

    def feed(self, chunk: bytes | memoryview) -> None:
        view = memoryview(chunk)
        i, end = 0, len(view)
        while i < end and not self.ended:
            if self._skip:
                step = min(self._skip, end - i)
                self._skip -= step
                i += step
                continue
            if self._collecting is not None:
                step = min(self._collect, end - i)
                self._extended += view[i : i + step]
                self._collect -= step
                i += step
                if self._collect == 0:
                    self._extended_done()
                continue
            step = min(BLOCK - len(self._header), end - i)
            self._header += view[i : i + step]
            i += step
            if len(self._header) == BLOCK:
                block = bytes(self._header)
                self._header.clear()
                self._block(block)

    def _block(self, block: bytes) -> None:
        if block == b"\0" * BLOCK:
            self._zeros += 1
            if self._zeros == 2:
                self.ended = True
            return
        self._zeros = 0
        try:
            info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
        except tarfile.HeaderError as exc:
            raise Invalid(f"A tar in the archive is damaged: {exc}") from exc
        size = info.size
        if info.type in _EXTENDED:
            if size > MAX_EXTENDED:
                raise Invalid("A tar in the archive has an oversized extended header")
            self._collecting = info.type
            self._collect = size
            self._collect_pad = -size % BLOCK
            self._extended.clear()
            if size == 0:
                self._extended_done()
            return
        if info.type == tarfile.GNUTYPE_SPARSE:
            raise Invalid(f"Unsafe member in the archive: {info.name!r} is an old GNU sparse entry")
        pending, self._pending = self._pending, {}
        if "path" in pending:
            info.name = pending["path"]
        if "linkpath" in pending:
            info.linkname = pending["linkpath"]
        if "size" in pending:
            size = info.size = _number(pending["size"])
        real_size = size
        if _SPARSE_NAME in pending:  # GNU tar's sparse file: written under this name
            self.on_entry(info)
            info.name = pending[_SPARSE_NAME]
            real_size = _number(pending.get("GNU.sparse.realsize", str(size)))
        self.on_entry(info)
        if self.first is None:
            self.first = info
        special = (
            info.ischr()
            or info.isblk()
            or (info.isreg() and (info.mode & 0o6000 or _CAPABILITY in pending))
        )
        if special and len(self.special) < MAX_SPECIAL:
            self.special.append(info.name)
        self.entries += 1
        if info.isreg():
            self.files += 1
            self.data_bytes += real_size
        if info.type in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE):
            self._skip = size + (-size % BLOCK)

    def _extended_done(self) -> None:
        data = bytes(self._extended)
        kind, self._collecting = self._collecting, None
        if kind == tarfile.XHDTYPE:
            self._pending.update(_pax_records(data))
        elif kind == tarfile.GNUTYPE_LONGNAME:
            self._pending["path"] = data.rstrip(b"\0").decode("utf-8", "surrogateescape")
        elif kind == tarfile.GNUTYPE_LONGLINK:
            self._pending["linkpath"] = data.rstrip(b"\0").decode("utf-8", "surrogateescape")
        # A global PAX header (XGLTYPE) changes nothing this scanner looks at.
        self._skip = self._collect_pad

    def finish(self) -> None:
        """The stream is over: it must have reached its end-of-archive blocks (one
        zero block suffices, as GNU tar allows)."""
        incomplete = self._skip or self._collecting is not None or self._header
        if not (self.ended or self._zeros == 1) or incomplete:
            raise Invalid("A tar in the archive is cut short")
