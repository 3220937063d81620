"""A loopback-gRPC render keeps its threads on one CPU and gives the caller its CPUs back."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest

from modelplane_cli.render import FunctionRegistry
from modelplane_cli.render.affinity import OneCpu, _threads, current_cpu
from modelplane_cli.render.runners import GrpcFunctions

from .support import PARENT, FakeFunction, config_map, render_text, write_apis

# What `os.sched_getaffinity(0)` gives: a thread's allowed CPUs.
Cpus = set[int]
T = TypeVar("T")

THREAD_STAT = Path("/proc/thread-self/stat")

needs_two_cpus = pytest.mark.skipif(
    not THREAD_STAT.exists()
    or not hasattr(os, "sched_getaffinity")
    or len(os.sched_getaffinity(0)) < 2,
    reason="CPU affinity is set only where the platform reports and sets it and more "
    "than one CPU is allowed",
)


def stat_line(command: bytes, processor: int) -> bytes:
    # proc(5): pid (comm) state, then fields 4..52; field 39 is `processor`.
    after = ["S", *[str(n) for n in range(4, 39)], str(processor), *["0"] * 13]
    return b"4242 (" + command + b") " + " ".join(after).encode() + b"\n"


@pytest.mark.parametrize("command", [b"python", b"a) b (c", b"x)", b"render\xff\xfe"])
def test_the_processor_is_read_after_the_command_name_whatever_it_holds(command: bytes) -> None:
    assert current_cpu(stat_line(command, 1)) == 1


@pytest.mark.parametrize("line", [b"", b"4242 (python) S 1 2", b"4242 (python)"])
def test_a_short_stat_line_names_no_processor(line: bytes) -> None:
    assert current_cpu(line) is None


@needs_two_cpus
def test_this_thread_s_own_stat_names_a_cpu_it_may_run_on() -> None:
    cpu = current_cpu(THREAD_STAT.read_bytes())
    assert cpu is not None and cpu in os.sched_getaffinity(0)


def on_a_thread_of_its_own(work: Callable[[], T]) -> T:
    """Run `work` on a new thread, so a pytest worker's own affinity is never touched."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(work())
        except BaseException as exc:  # re-raised on the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]


@needs_two_cpus
def test_confining_keeps_the_thread_and_its_new_threads_on_one_cpu_until_released() -> None:
    def work() -> tuple[Cpus, Cpus, Cpus, Cpus]:
        before = os.sched_getaffinity(0)
        cpus = OneCpu()
        cpus.confine()
        confined = os.sched_getaffinity(0)
        started: list[Cpus] = []
        child = threading.Thread(target=lambda: started.append(os.sched_getaffinity(0)))
        child.start()
        child.join()
        cpus.release()
        return before, confined, started[0], os.sched_getaffinity(0)

    before, confined, started, after = on_a_thread_of_its_own(work)
    assert len(before) >= 2
    assert len(confined) == 1 and confined < before
    assert started == confined
    assert after == before


@needs_two_cpus
def test_confining_twice_then_releasing_gives_back_the_cpus_first_held() -> None:
    def work() -> tuple[Cpus, Cpus]:
        before = os.sched_getaffinity(0)
        cpus = OneCpu()
        cpus.confine()
        cpus.confine()
        cpus.release()
        cpus.release()
        return before, os.sched_getaffinity(0)

    before, after = on_a_thread_of_its_own(work)
    assert after == before


@needs_two_cpus
def test_release_gives_the_threads_started_while_confined_the_cpus_back() -> None:
    def work() -> tuple[Cpus, Cpus, Cpus, Cpus]:
        before = os.sched_getaffinity(0)
        cpus = OneCpu()
        cpus.confine()
        confined = os.sched_getaffinity(0)
        # One thread inherits the confinement; another confines itself elsewhere,
        # as a thread a render did not start would, and is left as it is.
        elsewhere = {min(before - confined)}
        inherits, own = threading.Event(), threading.Event()
        done = threading.Event()

        def waits(ready: threading.Event, cpus_wanted: Cpus | None) -> None:
            if cpus_wanted is not None:
                os.sched_setaffinity(0, cpus_wanted)
            ready.set()
            done.wait(10)

        children = [
            threading.Thread(target=waits, args=(inherits, None)),
            threading.Thread(target=waits, args=(own, elsewhere)),
        ]
        for child in children:
            child.start()
        assert inherits.wait(10) and own.wait(10), "a child thread never started"
        cpus.release()
        after = [os.sched_getaffinity(child.native_id or 0) for child in children]
        done.set()
        for child in children:
            child.join()
        return before, elsewhere, after[0], after[1]

    before, elsewhere, inherited, own = on_a_thread_of_its_own(work)
    assert len(before) >= 2 and inherited == before
    assert own == elsewhere


class AffinityRecorder(FakeFunction):
    """Composes one ConfigMap and notes the CPUs the thread composing it may use."""

    def __init__(self) -> None:
        self.seen: list[Cpus] = []

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.seen.append(os.sched_getaffinity(0))
        config_map(rsp, "first", {"from": "step-0"})


@needs_two_cpus
@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "grpc"])
def test_a_render_over_grpc_serves_on_one_cpu_and_in_process_changes_nothing(
    tmp_path: Path, in_process: bool
) -> None:
    apis = write_apis(tmp_path)
    recorder = AffinityRecorder()

    def work() -> tuple[Cpus, bool, Cpus, list[Cpus]]:
        before = os.sched_getaffinity(0)
        existing = _threads()
        ok = render_text(apis, PARENT, {"fn-parent": recorder}, in_process=in_process).ok
        left = [os.sched_getaffinity(t) for t in sorted(_threads() - existing)]
        return before, ok, os.sched_getaffinity(0), left

    before, ok, after, left = on_a_thread_of_its_own(work)
    assert ok and recorder.seen and len(before) >= 2
    served = recorder.seen[0]
    if in_process:
        assert served == before
    else:
        assert len(served) == 1 and served < before
    assert all(seen == served for seen in recorder.seen)
    assert after == before
    # Nothing the render started and left running (gRPC core's threads, when they
    # outlive it) stays confined. When gRPC core already ran in this process, nothing
    # outlives the render and this holds trivially; the release test above holds the
    # logic whatever ran before.
    assert all(cpus == before for cpus in left if len(cpus) == 1)


@needs_two_cpus
def test_the_caller_gets_its_cpus_back_when_stopping_the_servers_fails() -> None:
    class StopError(Exception):
        """What an interrupted stop raises."""

    def work() -> tuple[Cpus, Cpus, Cpus]:
        before = os.sched_getaffinity(0)
        functions = GrpcFunctions(FunctionRegistry({"fn-parent": AffinityRecorder()}))
        request = fnv1.RunFunctionRequest().SerializeToString()
        asyncio.run(functions.run("fn-parent", request))
        during = os.sched_getaffinity(0)
        pool_shutdown = functions._pool.shutdown  # pyright: ignore[reportPrivateUsage]

        def shutdown(wait: bool = True, *, cancel_futures: bool = False) -> None:
            pool_shutdown(wait, cancel_futures=cancel_futures)
            raise StopError

        functions._pool.shutdown = shutdown  # pyright: ignore[reportPrivateUsage]
        with pytest.raises(StopError):
            asyncio.run(functions.close())
        return before, during, os.sched_getaffinity(0)

    before, during, after = on_a_thread_of_its_own(work)
    assert len(before) >= 2 and len(during) == 1
    assert after == before
