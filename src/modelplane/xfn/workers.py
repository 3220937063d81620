"""Compose on several processes, so a function pod uses every core it is given.

Compose is pure Python and holds the GIL: however many calls arrive at once, one
process composes one at a time. Crossplane keeps one HTTP/2 connection to a
function, so processes sharing the port (SO_REUSEPORT) would not share its calls;
instead the server's process receives every call and hands the request's bytes
to a pool of worker processes, each a whole function with its own memos, and
sends back the response's bytes. A process answers a request exactly as any
other does (the fuzz tests' "another process" check), so which worker composes
a call never changes its answer.

Workers are started with `spawn`, not `fork`: the gRPC server's threads are
running by then, and forking them is unsafe.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import asyncio
import math
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Final

from crossplane.function import logging

from modelplane.xfn import required
from modelplane.xfn.runner import ComposeFunction

_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


UNLIMITED_WORKERS: Final = 2
"""Workers for a container without a CPU limit: Crossplane v2.3 sets none on a
function's Deployment (only a DeploymentRuntimeConfig does), and sizing to the
node's CPUs would start a whole function per core of a large node, each with its
own memos (hundreds of MiB at 10,000 clusters)."""


def default_workers() -> int:
    """The container's CPU limit (cgroup v2 `cpu.max`, rounded up); without one (or
    off cgroup v2), the CPUs this process may run on, at most `UNLIMITED_WORKERS`.
    Each worker keeps its own memos: a CPU limit without a memory limit to match
    multiplies the function's memory by the workers (docs/performance.md)."""
    try:
        quota, period = _CPU_MAX.read_text().split()[:2]
        if quota != "max":
            return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    affinity = getattr(os, "sched_getaffinity", None)  # Linux only
    cpus = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return max(1, min(UNLIMITED_WORKERS, cpus))


_runner: ComposeFunction | None = None


def _start(make_runner: Callable[[], ComposeFunction], debug: bool) -> None:
    """In each worker: the function, trusting resource versions as the server does."""
    global _runner  # noqa: PLW0603 (one function per worker process)
    logging.configure(level=logging.Level.DEBUG if debug else logging.Level.INFO)
    required.trust_resource_versions(True)
    _runner = make_runner()


def _compose(data: bytes) -> bytes:
    if _runner is None:
        raise RuntimeError("a worker composed before it started")
    return _runner.run_function_serialized(data).SerializeToString(deterministic=True)


def _ready() -> bool:
    return _runner is not None


class Workers:
    """A pool of `processes` function processes, started at once and left starting
    (the caller imports the function meanwhile): `started()` waits for them."""

    def __init__(
        self,
        make_runner: Callable[[], ComposeFunction],
        processes: int,
        *,
        debug: bool,
    ) -> None:
        self._make = make_runner
        self._processes = processes
        self._debug = debug
        self._pool, self._starting = self._starting_pool()

    def _starting_pool(self) -> tuple[ProcessPoolExecutor, list[Future[bool]]]:
        pool = ProcessPoolExecutor(
            self._processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(self._make, self._debug),
        )
        # Start (and import) every worker now, not on the first calls.
        return pool, [pool.submit(_ready) for _ in range(self._processes)]

    def started(self) -> None:
        """Wait until every worker has imported the function and made its runner."""
        for future in self._starting:
            future.result()
        self._starting = []

    def _started(self) -> ProcessPoolExecutor:
        """A new pool, its workers started (after one died)."""
        pool, starting = self._starting_pool()
        for future in starting:
            future.result()
        return pool

    async def run(self, data: bytes) -> bytes:
        """The response's bytes to the request `data`, composed by a worker. A pool
        whose worker died (killed for memory, say) is started again and the call
        made once more."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, _compose, data)
        except BrokenProcessPool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = await loop.run_in_executor(None, self._started)
            return await loop.run_in_executor(self._pool, _compose, data)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
