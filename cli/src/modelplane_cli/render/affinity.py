"""Keeping the threads of a loopback-gRPC render on one CPU.

Every function call of a render crosses threads several times: the engine's
thread hands the request to gRPC core, whose threads wake the server's polling
thread, which hands it to the handler thread, and the answer travels back the
same way. The engine makes one call at a time, so these threads never run
together; when the kernel wakes each one on another CPU, every hand-off is an
inter-processor interrupt (a VM exit under a hypervisor) and the working set
changes caches. Kept on the CPU the render started on, the same render took
about a sixth less CPU and wall time on this project's 2-core VM
(design/render-performance.md, "One CPU for loopback gRPC").

Threads inherit the affinity of the thread that starts them, so confining the
engine's thread before the first server and channel exist confines every thread
gRPC starts for them. The caller's own affinity is given back afterwards; threads
gRPC started meanwhile stay on that CPU for the life of the process. Where the
platform cannot report or set affinity, or only one CPU is allowed, nothing
changes.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

# The 0-based index, after the command name's closing parenthesis, of the
# `processor` field of /proc/<pid>/task/<tid>/stat (field 39 of proc(5)).
_PROCESSOR_FIELD = 36


def current_cpu(stat_text: str) -> int | None:
    """The CPU a thread last ran on, read from its /proc stat line."""
    _, _, after_name = stat_text.rpartition(")")
    fields = after_name.split()
    if len(fields) <= _PROCESSOR_FIELD:
        return None
    value = fields[_PROCESSOR_FIELD]
    return int(value) if value.isdigit() else None


class OneCpu:
    """Confines the calling thread (and the threads it then starts) to the CPU it
    is on; `release` gives the calling thread back the CPUs it had."""

    def __init__(self) -> None:
        self._allowed: set[int] | None = None

    def confine(self) -> None:
        if self._allowed is not None or not hasattr(os, "sched_setaffinity"):
            return
        try:
            allowed = os.sched_getaffinity(0)
            cpu = current_cpu(Path("/proc/thread-self/stat").read_text())
            if len(allowed) < 2 or cpu not in allowed:
                return
            os.sched_setaffinity(0, {cpu})
        except OSError:
            return
        self._allowed = allowed

    def release(self) -> None:
        if self._allowed is None:
            return
        allowed, self._allowed = self._allowed, None
        with suppress(OSError):
            os.sched_setaffinity(0, allowed)
