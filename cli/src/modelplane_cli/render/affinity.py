"""Keeping the threads of a loopback-gRPC render on one CPU.

Every function call of a render crosses threads several times: the engine's
thread hands the request to gRPC core, whose threads wake the server's polling
thread, which hands it to the handler thread, and the answer travels back the
same way. The engine makes one call at a time, so these threads never need to run
together; when the kernel wakes each one on another CPU, every hand-off is an
inter-processor interrupt (a VM exit under a hypervisor) and a change of caches.
Kept on the CPU the engine's thread is on at its first call, renders on this
project's 2-core VM took about a tenth less time (design/render-performance.md,
"One CPU for loopback gRPC").

Threads inherit the affinity of the thread that starts them, so confining the
engine's thread before the first server and channel exist confines the threads it
and they start: the servers' polling and handler threads, and gRPC core's own
when gRPC core starts during the render (threads gRPC core already had, and those
its earlier threads start, are left where they are). `release` gives the engine's
thread its CPUs back, and every thread started since that is still confined too,
so nothing the render started stays on one CPU after it. Where the platform cannot
report or set affinity, or only one CPU is allowed, nothing changes.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

# The 0-based index, after the command name's closing parenthesis, of the
# `processor` field of /proc/<pid>/task/<tid>/stat (field 39 of proc(5)).
_PROCESSOR_FIELD = 36
_THREAD_STAT = Path("/proc/thread-self/stat")
_TASKS = Path("/proc/self/task")
# How often `release` lists the threads at the most: bounded whatever they do.
_MOST_LISTINGS = 8


def current_cpu(stat: bytes) -> int | None:
    """The CPU a thread last ran on, read from its /proc stat line. Bytes: a thread's
    name may be any bytes, and only what follows it is read."""
    _, _, after_name = stat.rpartition(b")")
    fields = after_name.split()
    if len(fields) <= _PROCESSOR_FIELD:
        return None
    value = fields[_PROCESSOR_FIELD]
    return int(value) if value.isdigit() else None


def _threads() -> set[int]:
    return {int(task.name) for task in _TASKS.iterdir() if task.name.isdigit()}


class OneCpu:
    """Confines the calling thread (and the threads it then starts) to the CPU it
    is on; `release` gives it, and every thread started since that is still
    confined, the CPUs the calling thread had."""

    def __init__(self) -> None:
        self._allowed: set[int] | None = None
        self._confined: set[int] = set()
        self._existing: set[int] = set()

    def confine(self) -> None:
        if self._allowed is not None or not hasattr(os, "sched_setaffinity"):
            return
        try:
            allowed = os.sched_getaffinity(0)
            cpu = current_cpu(_THREAD_STAT.read_bytes())
            if len(allowed) < 2 or cpu not in allowed:
                return
            existing = _threads()
            os.sched_setaffinity(0, {cpu})
        except OSError:
            return
        self._allowed, self._confined, self._existing = allowed, {cpu}, existing

    def release(self) -> None:
        if self._allowed is None:
            return
        allowed, self._allowed = self._allowed, None
        with suppress(OSError):
            os.sched_setaffinity(0, allowed)
        seen = set(self._existing)
        # Listed again until no new thread shows: a confined thread may start another
        # (gRPC core's pool grows on demand) while the ones before it are given back.
        for _ in range(_MOST_LISTINGS):
            try:
                started = _threads() - seen
            except OSError:
                return
            if not started:
                return
            seen |= started
            for thread in sorted(started):
                # A thread may end between the listing and these calls.
                with suppress(OSError):
                    if os.sched_getaffinity(thread) == self._confined:
                        os.sched_setaffinity(thread, allowed)
