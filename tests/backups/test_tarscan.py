"""The push scanner of inner tars against tars written by Python's tarfile in every
format (long names, long link targets, PAX records), fed in chunks of every size."""

from __future__ import annotations

import io
import tarfile

import pytest

from stackyard.backups.archive import scanner
from stackyard.backups.tarscan import TarScanner
from stackyard.errors import Invalid

LONG = "d" * 150


def build(fmt: int) -> tuple[bytes, list[str]]:
    raw = io.BytesIO()
    names = []
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:

        def add(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = ""):
            info = tarfile.TarInfo(name)
            info.type, info.size, info.linkname = kind, len(data), link
            info.uid = 3_000_000 if fmt == tarfile.PAX_FORMAT else 1000  # PAX: past ustar
            tar.addfile(info, io.BytesIO(data) if data else None)
            names.append(name)

        add("data", tarfile.DIRTYPE)
        add("data/a.txt", data=b"hello\n" * 100)
        add(f"data/{LONG}/{LONG}.bin", data=bytes(range(256)) * 40)
        add("data/link", tarfile.SYMTYPE, link=f"{LONG}/{LONG}.bin" * 1)
        add("data/hard", tarfile.LNKTYPE, link="data/a.txt")
        add("data/ünïcödé ✓.txt", data=b"x")
        add("data/empty", data=b"")
    return raw.getvalue(), names


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
@pytest.mark.parametrize("chunk", [1, 7, 512, 513, 4096, 1 << 20])
def test_the_scanner_sees_what_tarfile_wrote(fmt, chunk):
    data, names = build(fmt)
    seen: list[tarfile.TarInfo] = []
    scan = TarScanner(on_entry=seen.append)
    for offset in range(0, len(data), chunk):
        scan.feed(data[offset : offset + chunk])
    scan.finish()
    assert [info.name for info in seen] == names
    assert scan.entries == len(names) and scan.files == 4
    assert next(i for i in seen if i.name == "data/link").linkname == f"{LONG}/{LONG}.bin"
    assert scan.data_bytes == 600 + 256 * 40 + 1


def test_a_stream_cut_short_is_refused():
    data, _ = build(tarfile.PAX_FORMAT)
    for cut in (100, 600, 1500, len(data) // 3):
        scan = TarScanner(on_entry=lambda info: None)
        scan.feed(data[:cut])
        with pytest.raises(Invalid, match="cut short"):
            scan.finish()


def test_the_archive_scanner_checks_every_entry():
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, link in [
            ("data", tarfile.DIRTYPE, ""),
            ("data/x", tarfile.SYMTYPE, "/etc"),
            ("data/x/passwd", tarfile.REGTYPE, ""),
        ]:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, link
            tar.addfile(info)
    with pytest.raises(Invalid, match="goes through a link"):
        scanner().feed(raw.getvalue())


def test_a_damaged_header_is_refused():
    data, _ = build(tarfile.GNU_FORMAT)
    broken = bytearray(data)
    broken[148:156] = b"9999999\0"  # the first header's checksum
    with pytest.raises(Invalid, match="damaged"):
        TarScanner(on_entry=lambda info: None).feed(bytes(broken))
