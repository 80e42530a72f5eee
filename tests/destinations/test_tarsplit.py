"""A tar split into its metadata and data joins back byte for byte (pure: tars made by
Python's tarfile and by GNU tar, sparse files included), and a file changed in place
changes the data only where it changed."""

from __future__ import annotations

import io
import os
import random
import subprocess
import tarfile
from pathlib import Path

import pytest

from stackyard.destinations.tarsplit import Splitter, joined


def split(stream: bytes, seed: int = 0) -> tuple[bytes, bytes]:
    """`stream` fed in chunks of random sizes."""
    rng = random.Random(seed)
    splitter = Splitter()
    meta, data = bytearray(), bytearray()
    at = 0
    while at < len(stream):
        size = rng.choice([1, 7, 511, 512, 513, 4096, 65536, 1 << 20])
        m, d = splitter.feed(stream[at : at + size])
        meta += m
        data += d
        at += size
    meta += splitter.finish()
    return bytes(meta), bytes(data)


def join(meta: bytes, data: bytes) -> bytes:
    metas, datas = io.BytesIO(meta), io.BytesIO(data)
    return b"".join(joined(metas.read, datas.read, len(meta)))


def python_tar(fmt: int, mtime: float = 1_700_000_000.5) -> bytes:
    out = io.BytesIO()
    rng = random.Random(1)
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        folder = tarfile.TarInfo("data")
        folder.type = tarfile.DIRTYPE
        tar.addfile(folder)
        for n, size in enumerate([0, 1, 511, 512, 513, 70_000, 1_000_000]):
            info = tarfile.TarInfo(f"data/{'long-' * 30 if n % 2 else ''}file-{n}-é")
            info.size, info.mtime = size, mtime + n
            tar.addfile(info, io.BytesIO(rng.randbytes(size)))
        link = tarfile.TarInfo("data/hard")
        link.type, link.linkname = tarfile.LNKTYPE, "data/file-0-é"
        tar.addfile(link)
        sym = tarfile.TarInfo("data/" + "s" * 200)
        sym.type, sym.linkname = tarfile.SYMTYPE, "t" * 300
        tar.addfile(sym)
    return out.getvalue()


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT])
def test_a_tar_joins_back_byte_for_byte(fmt: int):
    stream = python_tar(fmt) if fmt != tarfile.USTAR_FORMAT else _ustar()
    meta, data = split(stream)
    assert join(meta, data) == stream
    with tarfile.open(fileobj=io.BytesIO(stream)) as tar:
        contents = sum(-(-m.size // 512) * 512 for m in tar.getmembers() if m.isreg())
    assert len(data) == contents  # every file's bytes, nothing else
    for seed in range(1, 5):
        assert split(stream, seed) == (meta, data)


def _ustar() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for n in range(3):
            info = tarfile.TarInfo(f"f{n}")
            info.size = 1000 * n
            tar.addfile(info, io.BytesIO(b"x" * info.size))
    return out.getvalue()


def test_gnu_tars_of_sparse_files_join_back(tmp_path: Path):
    """As the backups read data: GNU tar, POSIX format, sparse files, nanosecond times."""
    root = tmp_path / "data"
    root.mkdir()
    with (root / "sparse").open("wb") as handle:
        handle.seek(5_000_000)
        handle.write(b"end")
        handle.seek(10_000)
        handle.write(os.urandom(70_000))
    (root / "plain").write_bytes(os.urandom(123_457))
    (root / "link").symlink_to("plain")
    stream = subprocess.run(
        ["tar", "--create", "--file=-", "--format=posix", "--sparse", "--numeric-owner",
         f"--directory={tmp_path}", "data"],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    meta, data = split(stream)
    assert join(meta, data) == stream


def test_a_file_changed_in_place_changes_the_data_only_where_it_changed():
    before = python_tar(tarfile.PAX_FORMAT)
    meta, data = split(before)
    # The largest file's bytes 300,000..300,100 changed, and its time.
    with tarfile.open(fileobj=io.BytesIO(before)) as tar:
        member = max(tar.getmembers(), key=lambda m: m.size)
    changed = bytearray(before)
    at = member.offset_data + 300_000
    changed[at : at + 100] = bytes(100)
    after_stream = _retimed(bytes(changed), member)
    after_meta, after_data = split(after_stream)
    assert join(after_meta, after_data) == after_stream
    assert len(after_data) == len(data)
    differing = [i for i in range(len(data)) if data[i] != after_data[i]]
    assert differing and max(differing) - min(differing) < 100
    assert after_meta != meta  # (the time is in the metadata)


def _retimed(stream: bytes, member: tarfile.TarInfo) -> bytes:
    """The stream with `member` given another time (its header and PAX record)."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(stream)) as source,
        tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for info in source.getmembers():
            if info.name == member.name:
                info.mtime += 1000.25
            tar.addfile(info, source.extractfile(info) if info.isreg() else None)
    return out.getvalue()


def test_metadata_cut_short_or_data_missing_is_refused():
    stream = python_tar(tarfile.PAX_FORMAT)
    meta, data = split(stream)
    with pytest.raises(ValueError, match="data ends"):
        join(meta, data[: len(data) // 2])
