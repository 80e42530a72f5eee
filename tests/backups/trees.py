"""Data of every kind a backup must keep, written into a volume or a host folder (through
a helper container, then on this machine for what busybox cannot make), and a snapshot
of a tree to compare after a restore: per entry its type, mode, owner, group,
modification time to the nanosecond, link count, size, content hash, link target, every
xattr (POSIX ACLs among them) and whether it is sparse (how restic and borg prove a
restore)."""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import subprocess
from pathlib import Path

BUSYBOX = "stackyard-test/busybox:1"
LONG = "l" * 120

#: Builds the tree in /data (run as root in a helper).
MAKE = f"""
set -e
cd /data
mkdir -p dir/sub empty "nön-ascii ✓" ro-dir deep/{LONG}/{LONG}
echo hello > dir/file
echo deep > deep/{LONG}/{LONG}/{LONG}.txt
echo "grüße" > "nön-ascii ✓/ünïcödé.txt"
echo setuid > suid && chmod 4755 suid
echo setgid > sgid && chmod 2755 sgid
mkdir sticky && chmod 1777 sticky
echo in > ro-dir/in && chmod 0555 ro-dir
echo owned > owned && chown 100000:200000 owned
echo app > app-owned && chown 999:999 app-owned && chown 999:999 dir/sub
chmod 0700 dir/sub
ln -s dir/file rel-link
ln -s /etc/passwd abs-link
ln -s missing dangling
echo hard > hard1 && ln hard1 hard2
head -c 100000 /dev/urandom > random.bin
truncate -s 64M sparse && printf end >> sparse
mkfifo fifo
mknod dev-null c 1 3 && chmod 0640 dev-null
touch -d @1600000000 dir/file random.bin
touch -d @1500000000 dir empty
"""


def _mount(kind: str, source: str) -> list[str]:
    return ["--mount", f"type={kind},source={source},target=/data"]


def helper(kind: str, source: str, script: str) -> str:
    done = subprocess.run(
        ["docker", "run", "--rm", *_mount(kind, source), BUSYBOX, "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def make_tree(kind: str, source: str) -> None:
    helper(kind, source, MAKE)


def host_path(kind: str, source: str) -> Path:
    """Where a volume's or a bind's data lies on this machine (the engine's own)."""
    if kind == "bind":
        return Path(source)
    done = subprocess.run(
        ["docker", "volume", "inspect", "-f", "{{.Mountpoint}}", source],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL as the kernel stores it (`system.posix_acl_*`): version 2, then per
    entry its tag, permissions and id."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


_ANY = 0xFFFFFFFF
ACCESS_ACL = _acl((1, 6, _ANY), (2, 4, 1000), (4, 4, _ANY), (0x10, 4, _ANY), (0x20, 0, _ANY))
DEFAULT_ACL = _acl((1, 7, _ANY), (2, 5, 1001), (4, 5, _ANY), (0x10, 5, _ANY), (0x20, 5, _ANY))
#: cap_net_bind_service, permitted and effective (a v2 file capability).
CAPABILITY = struct.pack("<IIIII", 0x02000001, 1 << 10, 0, 0, 0)
#: Names of every kind, as bytes: not UTF-8, a newline, a leading dash, 255 bytes.
ODD_NAMES = (b"not-utf8-\xff\xfe", b"new\nline", b"-leading-dash", b"n" * 255)
#: Folders of 245-byte names, deep enough for a path of about 3,950 bytes below the root.
DEEP = [b"d" * 245] * 16


def make_deep(root: Path) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in DEEP:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        leaf = os.open(b"bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"4000 bytes down\n")
        os.close(leaf)
    finally:
        os.close(fd)


def decorate(kind: str, source: str) -> None:
    """What busybox cannot make, added to a tree of `make_tree` on this machine: xattrs
    (user, security), access and default ACLs, file capabilities, setuid on a file with
    two links, names of every kind, a path of 4,000 bytes, and nanosecond times (set
    last: on the root too)."""
    root = host_path(kind, source)
    os.setxattr(root / "dir/file", "user.note", b"kept \x00 binary")
    os.setxattr(root / "dir/file", "system.posix_acl_access", ACCESS_ACL)
    os.setxattr(root / "dir/sub", "system.posix_acl_default", DEFAULT_ACL)
    os.setxattr(root / "empty", "user.folder", b"on a folder")
    (root / "cap-bin").write_bytes(b"#!/bin/sh\n")
    os.setxattr(root / "cap-bin", "security.capability", CAPABILITY)
    (root / "suid-hard").write_text("two links\n")
    os.chmod(root / "suid-hard", 0o4750)
    os.link(root / "suid-hard", root / "suid-hard2")
    for name in ODD_NAMES:
        with open(bytes(root) + b"/" + name, "wb") as file:
            file.write(name + b"\n")
    os.mkdir(bytes(root) + b"/" + ODD_NAMES[0] + b".d")
    make_deep(root)
    for n, path in enumerate(["dir/file", "random.bin", "dir/sub", "empty", "dir", "."]):
        os.utime(root / path, ns=(1_600_000_000_000_000_000, 1_600_000_000_123_456_789 + n))


def snapshot(kind: str, source: str) -> dict[bytes, tuple]:
    """Every entry of the tree (the root's own metadata too, as `.`), by relative path:
    (type, mode, uid, gid, mtime in ns, links, size, SHA-256, link target, xattrs,
    sparse, device number). Read on this machine, links never followed."""
    root = os.fsencode(host_path(kind, source))
    entries: dict[bytes, tuple] = {}

    def visit(fd: int, relative: bytes) -> None:
        for name in sorted(map(os.fsencode, os.listdir(fd))):
            _entry(fd, name, relative + b"/" + name)

    def _entry(parent: int, name: bytes, relative: bytes) -> None:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        kind_ = stat.S_IFMT(st.st_mode)
        target = os.readlink(name, dir_fd=parent) if kind_ == stat.S_IFLNK else None
        digest = sparse = None
        xattrs: tuple = ()
        if kind_ in (stat.S_IFREG, stat.S_IFDIR):
            flags = os.O_RDONLY | os.O_NOFOLLOW | (os.O_DIRECTORY if kind_ == stat.S_IFDIR else 0)
            fd = os.open(name, flags, dir_fd=parent)
            try:
                xattrs = tuple(sorted((k, os.getxattr(fd, k)) for k in os.listxattr(fd)))
                if kind_ == stat.S_IFREG:
                    with os.fdopen(os.dup(fd), "rb") as data:
                        digest = hashlib.file_digest(data, "sha256").hexdigest()
                    sparse = st.st_blocks * 512 < st.st_size // 2
                else:
                    visit(fd, relative)
            finally:
                os.close(fd)
        entries[relative] = (
            kind_,
            oct(stat.S_IMODE(st.st_mode)),
            st.st_uid,
            st.st_gid,
            st.st_mtime_ns,
            st.st_nlink,
            st.st_size if kind_ != stat.S_IFDIR else None,
            digest,
            target,
            xattrs,
            sparse,
            st.st_rdev if kind_ in (stat.S_IFCHR, stat.S_IFBLK) else None,
        )

    parent = os.open(os.path.dirname(root), os.O_RDONLY | os.O_DIRECTORY)
    try:
        _entry(parent, os.path.basename(root), b".")
    finally:
        os.close(parent)
    return entries
