"""The function server `bench call` and `bench fleet` time: compose-model-deployment's
own command in a child process on loopback, and a channel set up like Crossplane's
(gRPC-Go's client defaults: unlimited send, 4 MiB receive)."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import grpc

from modelplane_cli.render.runners import RUN_FUNCTION_METHOD

CLIENT_RECEIVE_LIMIT = 4 * 1024 * 1024  # gRPC-Go's default, which Crossplane keeps
CALL_DEADLINE_SECONDS = 120.0
"""Crossplane v2.3 sets no deadline of its own on a function call
(`internal/xfn/function_runner.go`, `RunFunction` passes the reconcile's context):
the only bound is the composite reconcile's 2-minute context
(`internal/controller/apiextensions/composite/reconciler.go`, `timeout = 2 *
time.Minute`, applied at the top of `Reconcile`), shared by every call, fetch and
apply of that reconcile. A call is given all of it; what the rest of the reconcile
takes is small beside a fleet-sized call."""
_SERVER = "from compose_model_deployment.main import main; main()"
_READY_SECONDS = 60.0
_STOP_SECONDS = 30.0  # Kubernetes' default terminationGracePeriodSeconds
_CONCURRENT_DEADLINE = 60.0  # calls queue behind each other: throughput, not latency


def _cpu_seconds(pid: int) -> float:
    """CPU seconds of every thread of `pid` and, recursively, of its children."""
    total = 0.0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0.0  # a process that ended meanwhile
    for task in tasks:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int((task / "schedstat").read_text().split()[0]) / 1e9
    return total + sum(_cpu_seconds(child) for child in _children(pid))


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            found.extend(int(child) for child in task.read_text().split())
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# gRPC's reconnect backoff (1 s, then 1.6 times longer each refused attempt) would
# poll a starting server at about 1, 2.6, 5.2 and 9.4 s, so a server ready after 3 s
# was seen at 5.2 s; a probe channel that retries every 50 ms sees it at once.
_PROBE_BACKOFF = [
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 50),
]


def wait_until_serving(address: str, timeout: float = _READY_SECONDS) -> None:
    """Return once a server listens at `address` (grpc.FutureTimeoutError after `timeout`)."""
    with grpc.insecure_channel(address, options=_PROBE_BACKOFF) as probe:
        grpc.channel_ready_future(probe).result(timeout=timeout)


def _peak_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


class Server:
    """One compose-model-deployment process on loopback, and a Crossplane-like channel."""

    def __init__(self, extra_args: list[str]) -> None:
        self.address = f"127.0.0.1:{_free_port()}"
        command = [sys.executable, "-c", _SERVER, "--insecure", "--address", self.address]
        self.process = subprocess.Popen(
            [*command, *extra_args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.channel = grpc.insecure_channel(
            self.address,
            options=[
                ("grpc.max_receive_message_length", CLIENT_RECEIVE_LIMIT),
                ("grpc.max_send_message_length", -1),
            ],
        )
        wait_until_serving(self.address)
        grpc.channel_ready_future(self.channel).result(timeout=_READY_SECONDS)
        self._call = self.channel.unary_unary(
            RUN_FUNCTION_METHOD, request_serializer=None, response_deserializer=None
        )

    def call(self, payload: bytes, deadline: float = CALL_DEADLINE_SECONDS) -> tuple[float, bytes]:
        """Milliseconds for one call and the response's bytes; grpc.RpcError on failure."""
        start = time.perf_counter()
        answer: bytes = self._call(payload, timeout=deadline)
        return (time.perf_counter() - start) * 1000, answer

    def cpu_seconds(self) -> float:
        """The server's CPU time so far: every thread of it and of its worker processes
        (the scheduler's nanoseconds, not /proc/PID/stat's 10 ms clock ticks)."""
        return _cpu_seconds(self.process.pid)

    def worker_peaks(self) -> list[float]:
        """The peak RSS in MiB of each worker process (`--workers` above 1)."""
        found: list[float] = []
        for child in _children(self.process.pid):
            try:
                # multiprocessing's resource tracker is a child too; workers are spawned.
                if b"spawn_main" not in Path(f"/proc/{child}/cmdline").read_bytes():
                    continue
            except OSError:
                continue
            peak = _peak_rss_mib(child)
            if peak is not None:
                found.append(peak)
        return found

    def close(self) -> float | None:
        """Stop the server; returns its peak RSS in MiB."""
        peak = _peak_rss_mib(self.process.pid)
        self.channel.close()
        children = _children(self.process.pid)
        self.process.terminate()
        try:
            self.process.wait(timeout=_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            # Under heavy load workers holding a 10,000-cluster fleet can take longer
            # to stop than Kubernetes' grace period; it would kill them too.
            for child in children:
                with contextlib.suppress(OSError):
                    os.kill(child, signal.SIGKILL)
            self.process.kill()
            self.process.wait()
        return peak


def error_text(error: grpc.RpcError) -> str:
    code = error.code() if isinstance(error, grpc.Call) else None
    details = error.details() if isinstance(error, grpc.Call) else str(error)
    return f"{code.name if code else 'UNKNOWN'}: {details}"


def throughput(
    server: Server, sent: list[bytes], callers: int, calls: int | None = None
) -> dict[str, Any]:
    """`callers` callers at once, each making `calls` calls (default: one per request of
    `sent`), sending the requests of `sent` in turn: calls answered per second, and the
    server's CPU seconds per second (cores used)."""
    errors: list[str] = []
    each = len(sent) if calls is None else calls

    def caller(offset: int) -> None:
        for index in range(each):
            try:
                server.call(sent[(index + offset) % len(sent)], _CONCURRENT_DEADLINE)
            except grpc.RpcError as error:
                errors.append(error_text(error))

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    cpu, start = server.cpu_seconds(), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    found: dict[str, Any] = {
        "callers": callers,
        "calls_per_second": round(callers * each / elapsed, 2),
        "cores_used": round((server.cpu_seconds() - cpu) / elapsed, 2),
    }
    if errors:
        found["error"] = errors[0]
    return found
