"""The two Linux system calls Python's `os` lacks: openat2(2) and renameat2(2)."""

from __future__ import annotations

import ctypes
import errno
import os
import platform

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08

RENAME_NOREPLACE = 0x1
RENAME_EXCHANGE = 0x2

_SYS_OPENAT2 = 437  # the same number on every architecture (added after the unification)
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "arm64": 276}.get(platform.machine())

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_renameat2 = getattr(_libc, "renameat2", None)  # glibc >= 2.28
if _renameat2 is not None:
    _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    _renameat2.argtypes.append(ctypes.c_uint)
    _renameat2.restype = ctypes.c_int


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _raise_errno() -> None:
    code = ctypes.get_errno()
    raise OSError(code, os.strerror(code))


def openat2(dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
    """openat2(2); raises OSError (without a file name: callers name the path)."""
    how = _OpenHow(flags, mode, resolve)
    raw = os.fsencode(path)
    for _ in range(16):  # EAGAIN: a concurrent rename while resolving "..": try again
        fd = _libc.syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(raw),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd >= 0:
            return int(fd)
        if ctypes.get_errno() != errno.EAGAIN:
            break
    _raise_errno()
    raise AssertionError("unreachable")


def openat2_available() -> bool:
    """Whether this kernel (and its seccomp profile) lets us use openat2 with RESOLVE_BENEATH."""
    try:
        probe = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fd = openat2(probe, ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, 0, RESOLVE_BENEATH)
    except OSError:
        return False
    finally:
        os.close(probe)
    os.close(fd)
    return True


def renameat2(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str, flags: int) -> None:
    """renameat2(2); raises OSError (ENOSYS where neither libc nor the kernel has it)."""
    a, b = os.fsencode(src), os.fsencode(dst)
    if _renameat2 is not None:
        result = _renameat2(src_dir_fd, a, dst_dir_fd, b, flags)
    elif _SYS_RENAMEAT2 is not None:
        result = _libc.syscall(
            ctypes.c_long(_SYS_RENAMEAT2),
            ctypes.c_int(src_dir_fd),
            ctypes.c_char_p(a),
            ctypes.c_int(dst_dir_fd),
            ctypes.c_char_p(b),
            ctypes.c_uint(flags),
        )
    else:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    if result != 0:
        _raise_errno()
