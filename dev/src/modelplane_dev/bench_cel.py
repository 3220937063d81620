"""`modelplane bench cel`: time CEL compilation and evaluation.

Each expression is timed in rounds: a round runs it many times and counts the
time per call, and the median and fastest rounds are reported, in microseconds.
Compilation bypasses the per-process cache (each call parses and type-checks
afresh); evaluation runs an already compiled program, as a reconcile does after
its first use of a selector. Selectors run against every device of the fleet
file when one is given (its selectors join the built-in ones), otherwise against
one built-in H100-like device. Selectors are also timed as the scheduler runs them,
drawing on one decision's CEL budget (phase `evaluate-decision`). One JSON line per
expression and phase, then one summary line per phase with the geometric mean of
the medians.
"""

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from modelplane import cel
from modelplane.cel import types as t
from modelplane.cel.environment import compile_program

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
DEFAULT_ROUNDS: Final = 9
# Each round lasts at least this long, so timer resolution and call overhead vanish.
_ROUND_SECONDS: Final = 0.02

SELECTORS: Final = (
    'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
    'device.attributes["gpu.nvidia.com"].architecture == "Hopper"',
    'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.0.0"))'
    ' && "gpu.nvidia.com" in device.capacity',
    'cel.bind(gpu, device.attributes["gpu.nvidia.com"], gpu.architecture in ["Hopper",'
    ' "Blackwell"] && gpu.cudaComputeCapability.major() >= 9)',
)
EXPRESSIONS: Final = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, x * 2).filter(x, x % 3 == 0).size() == 3",
    "'hello world'.split(' ').join('-').upperAscii().startsWith('HELLO')",
    "{'a': 1, 'b': 2}.all(k, k.size() == 1) && 'a' in {'a': 1}",
    "timestamp('2024-01-01T00:00:00Z') + duration('24h') > timestamp('2024-01-01T01:00:00Z')",
    "quantity('1.5Gi').add(quantity('512Mi')).compareTo(quantity('2Gi')) == 0",
    "'ac'.matches('^ab?c$') && int('42') + 1 == 43 && 2.5 > 1",
)
_DEVICE: Final = {
    "driver": "gpu.nvidia.com",
    "attributes": {
        "architecture": {"string": "Hopper"},
        "cudaComputeCapability": {"version": "9.0.0"},
    },
    "capacity": {"memory": {"value": "81559Mi"}},
}


class FleetFileError(ValueError):
    """The fleet file is missing, is not JSON, or has malformed pools or selectors."""


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "cel",
        help="time CEL compilation and evaluation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("--fleet", type=Path, help="fleet file (JSON): selectors and devices")
    command.add_argument(
        "--rounds",
        type=_positive,
        default=DEFAULT_ROUNDS,
        help=f"timed rounds per expression (default {DEFAULT_ROUNDS})",
    )
    command.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _fleet(path: Path) -> tuple[list[str], list[cel.Device]]:
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise FleetFileError(f"{path}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise FleetFileError(f"{path}: not JSON: {error}") from error
    if not isinstance(data, dict):
        raise FleetFileError(f"{path}: must be a JSON object")
    selectors = data.get("selectors", [])
    if not isinstance(selectors, list) or not all(isinstance(s, str) for s in selectors):
        raise FleetFileError(f"{path}: selectors must be a list of CEL strings")
    devices: list[cel.Device] = []
    for pool in data.get("pools", []):
        for device in pool.get("devices", []) if isinstance(pool, dict) else []:
            try:
                devices.append(cel.device_from_spec(device))
            except ValueError as error:
                raise FleetFileError(f"{path}: {error}") from error
    return selectors, devices  # pyright: ignore[reportUnknownVariableType]


def _time(call: Callable[[], object], rounds: int) -> dict[str, float]:
    """Median and fastest time per call over `rounds` rounds, in microseconds."""
    call()
    batch = 1
    while True:  # size a round so it lasts long enough to time well
        start = time.perf_counter()
        for _ in range(batch):
            call()
        if time.perf_counter() - start >= _ROUND_SECONDS:
            break
        batch *= 2
    per_call: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(batch):
            call()
        per_call.append((time.perf_counter() - start) / batch * 1e6)
    return {"median_us": round(statistics.median(per_call), 2), "min_us": round(min(per_call), 2)}


def _evaluation(expression: str, devices: list[cel.Device]) -> Callable[[], object]:
    """One evaluation of a plain expression, or one match of a selector per device."""
    if devices:
        selector = cel.compile_device_selector(expression)

        def match_all() -> object:
            results: list[bool | None] = []
            for device in devices:
                try:
                    results.append(selector.matches(device))
                except cel.CelRuntimeError:  # a device without the attribute, as in a real fleet
                    results.append(None)
            return results

        return match_all
    program = compile_program(expression, {})
    return lambda: program.run({})


def _decision_evaluation(expression: str, devices: list[cel.Device]) -> Callable[[], object]:
    """One match of a selector per device, each drawing on a decision's budget (its
    units never run out here, and its deadline is far away, but both are checked)."""
    selector = cel.compile_device_selector(expression)
    budget = cel.CostBudget(sys.maxsize, seconds=1e9)

    def match_all() -> object:
        results: list[bool | None] = []
        for device in devices:
            try:
                results.append(selector.matches(device, budget))
            except cel.CelRuntimeError:
                results.append(None)
        return results

    return match_all


def _summary(phase: str, medians: list[float]) -> dict[str, Any]:
    mean = math.exp(sum(math.log(m) for m in medians) / len(medians))
    return {"phase": phase, "summary": "geometric mean of medians", "median_us": round(mean, 2)}


def run(args: argparse.Namespace) -> int:
    selectors, devices = list(SELECTORS), [cel.device_from_spec(_DEVICE)]
    if args.fleet is not None:
        try:
            extra, devices = _fleet(args.fleet)
        except FleetFileError as error:
            print(f"modelplane bench cel: {error}", file=sys.stderr)
            return EXIT_FAILED
        selectors += [s for s in extra if s not in selectors]
        if not devices:
            print(f"modelplane bench cel: {args.fleet}: no devices", file=sys.stderr)
            return EXIT_FAILED
    cases = [(s, True) for s in selectors] + [(e, False) for e in EXPRESSIONS]
    compiled: list[float] = []
    for expression, is_selector in cases:
        variables = {"device": t.DEVICE} if is_selector else {}
        timing = _time(lambda e=expression, v=variables: compile_program(e, v), args.rounds)
        compiled.append(timing["median_us"])
        print(json.dumps({"phase": "compile", "expr": expression, **timing}))
    evaluated: list[float] = []
    for expression, is_selector in cases:
        devices_used = devices if is_selector else []
        timing = _time(_evaluation(expression, devices_used), args.rounds)
        if devices_used:
            # Per device match, so fleets with more devices stay comparable.
            timing = {k: round(v / len(devices_used), 2) for k, v in timing.items()}
        evaluated.append(timing["median_us"])
        print(json.dumps({"phase": "evaluate", "expr": expression, **timing}))
    decided: list[float] = []
    for expression in selectors:
        timing = _time(_decision_evaluation(expression, devices), args.rounds)
        timing = {k: round(v / len(devices), 2) for k, v in timing.items()}
        decided.append(timing["median_us"])
        print(json.dumps({"phase": "evaluate-decision", "expr": expression, **timing}))
    print(json.dumps(_summary("compile", compiled)))
    print(json.dumps(_summary("evaluate", evaluated)))
    print(json.dumps(_summary("evaluate-decision", decided)))
    return EXIT_OK
