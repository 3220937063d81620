"""Same request, same answer: warm or cold, fast or throttled, here or in another process.

Crossplane writes whatever a function answers; an answer that differs between two
calls for the same request is a status write that wakes every reader, or worse a
decision that flips. `nondeterminism(make_runner, path, requests)` answers every
request four ways and names each that differs from the first, byte for byte:

- cold: a fresh runner (nothing it memoises has been seen);
- warm: the same runner again;
- throttled: a fresh runner with every clock reading ten seconds after the last,
  as on a machine starved of CPU;
- elsewhere: a fresh process, with another hash seed, importing the runner from
  `path` (`package.module:Class`).

`mutated_sample` gives the mutated requests the fuzzer would send, for a seed.
"""

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_dev.fuzz.harness import Mutator, Runner, mutation, run_function

_CLOCKS = ("monotonic", "perf_counter", "time")
_NS_CLOCKS = ("monotonic_ns", "perf_counter_ns", "time_ns")


def answer(runner: Runner, req: fnv1.RunFunctionRequest) -> bytes:
    """The runner's response to `req`, serialized deterministically."""
    return run_function(runner, req).SerializeToString(deterministic=True)


@contextmanager
def throttled_clock(step: float = 10.0) -> Generator[None]:
    """Every reading of the process's clocks `step` seconds after the one before."""
    ticks = count(start=time.monotonic(), step=step)
    saved: dict[str, Any] = {name: getattr(time, name) for name in (*_CLOCKS, *_NS_CLOCKS)}
    try:
        for name in _CLOCKS:
            setattr(time, name, lambda: next(ticks))
        for name in _NS_CLOCKS:
            setattr(time, name, lambda: int(next(ticks) * 1e9))
        yield
    finally:
        for name, clock in saved.items():
            setattr(time, name, clock)


def mutated_sample(
    requests: Sequence[fnv1.RunFunctionRequest], *, seed: int, size: int
) -> list[fnv1.RunFunctionRequest]:
    """`size` mutated requests, as `Fuzzer.run` would build them for `seed`."""
    mutators = [Mutator(req) for req in requests]
    return [mutation(mutators, seed, iteration).request for iteration in range(size)]


_ELSEWHERE = """
import importlib, pathlib, sys
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_dev.fuzz.determinism import answer
module, _, name = sys.argv[2].partition(":")
make = getattr(importlib.import_module(module), name)
runner = make()
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.req")):
    req = fnv1.RunFunctionRequest.FromString(path.read_bytes())
    path.with_suffix(".rsp").write_bytes(answer(runner, req))
"""


def answers_elsewhere(path: str, requests: Sequence[fnv1.RunFunctionRequest]) -> list[bytes]:
    """The answers of the runner at `path`, in a fresh process with another hash seed."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for index, req in enumerate(requests):
            (folder / f"{index:06d}.req").write_bytes(req.SerializeToString())
        subprocess.run(
            [sys.executable, "-c", _ELSEWHERE, scratch, path],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "4242"},
        )
        return [(folder / f"{i:06d}.rsp").read_bytes() for i in range(len(requests))]


def nondeterminism(
    make_runner: Callable[[], Runner], path: str, requests: Sequence[fnv1.RunFunctionRequest]
) -> list[str]:
    """Every request whose answer differs between the four ways, and how."""
    problems: list[str] = []
    runner = make_runner()
    cold = [answer(runner, req) for req in requests]
    warm = [answer(runner, req) for req in requests]
    with throttled_clock():
        throttled = [answer(make_runner(), req) for req in requests]
    elsewhere = answers_elsewhere(path, requests)
    for index, first in enumerate(cold):
        for way, answers in (("warm", warm), ("throttled", throttled), ("elsewhere", elsewhere)):
            if answers[index] != first:
                problems.append(f"request {index}: the {way} answer differs from the cold one")
    return problems
