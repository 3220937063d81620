"""Keeping the memory the `modelplane` command frees, for its next use.

Every call over gRPC copies its request (up to 2.4 MB at 300 x 200) through
buffers that gRPC and grpcio allocate and free on several threads: the client's
slice, the server's read buffers, the bytearray and bytes grpcio builds the
handler's request from. glibc hands freed memory back to the kernel as soon as
the free space at a heap's top passes its trim threshold (a thread's heap drops
the pages, the main heap shrinks), and serves a large block from a fresh mapping
it unmaps on free; with its defaults (thresholds of 128 KiB that grow with the
blocks seen) such copies keep faulting their pages in anew. A 300 x 200 render
took about 720,000 page faults over gRPC and 150,000 with the memory kept, and
about 40 % less kernel time (design/render-performance.md, "What loopback gRPC
still costs").

The setting is the process's allocator's and stays for the life of the process:
glibc has no way to read it back, and fixing a threshold turns off its growth for
good. So only the `modelplane` command sets it (`main.console`), in a process that
is its own and ends with it; a program that calls `main` or `render` keeps its
allocator as it was. It only changes when memory goes back to the kernel, never
what a command computes. Where the C library is not glibc, nothing changes.
"""

from __future__ import annotations

import ctypes
import os

# mallopt(3) parameters, from glibc's <malloc.h>.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Free space at a heap's top kept up to 1 GiB before it goes back to the kernel.
_TRIM_THRESHOLD = 1 << 30
# glibc's largest mmap threshold on 64-bit (half its 64 MiB thread heap): below it,
# a block comes from a heap, whose freed pages are then kept.
_MMAP_THRESHOLD = 32 << 20


def _glibc() -> ctypes.CDLL | None:
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (ValueError, OSError):
        return None
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return libc


def keep_freed_memory() -> bool:
    """Keep what the process frees in its heaps instead of returning it to the
    kernel at once; True when the allocator took the setting."""
    libc = _glibc()
    if libc is None:
        return False
    # mallopt answers 1 on success, 0 on error.
    trim = libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    mmap = libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    return trim == 1 and mmap == 1
