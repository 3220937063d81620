"""`modelplane bench hostile`: the CEL work of one decision on admissible hostile
selectors, each timed on a cold call in a fresh process.

Each case is a deployment's selectors the XRD admits (at most 16 requests of 8,
each at most 10,240 bytes). A fresh process builds the CEL parser first (as a
function does at start-up), then runs one decision's CEL work once: every selector
charged, parsed and checked as the scheduler does, then evaluated on one device,
under one decision budget. The bound is asserted by cost in the tests; this only
reports what it takes on this machine (the goal: under 100 ms a case, cold).
"""

import argparse
import json
import subprocess
import sys
import time
from typing import Any, Final

from modelplane.cel.environment import warm
from modelplane.core.devices import Claim, DeviceSpec
from modelplane.scheduling import DecisionStopped, decision_budget
from modelplane.scheduling.cel_engine import CelEngine
from modelplane.scheduling.selectors import SelectorEvaluator

_BLOCK: Final = "(" * 32 + 'device.driver == "gpu.nvidia.com"' + ")" * 32


def _costly(tag: str) -> str:
    # 433,330 units when run; the costliest of its shape whose cel-go estimate
    # (982,213) the API server admits.
    expression = f'device.driver != "{tag}"'
    for level, size in enumerate((10, 10, 10, 10, 13)):
        items = ", ".join(str(i) for i in range(size))
        expression = f"[{items}].all(v{level}, {expression})"
    return expression


CASES: Final[dict[str, list[str]]] = {
    "realistic": ['device.attributes["gpu.nvidia.com"].architecture == "Hopper"'],
    "10 KB chain": ["true" + " && true" * 1279],
    "128 x 10 KB": [f"{i} == {i}" + " && true" * 1277 for i in range(128)],
    "deepest the budget parses": [" && ".join([_BLOCK] * 3)],
    "one costly": [_costly("a")],
    "nested 32, many": [_BLOCK.replace("gpu", f"g{i}") for i in range(128)],
    "two costly": [_costly("a"), _costly("b")],
    "128 costly": [_costly(f"s{i}") for i in range(128)],
}


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "hostile",
        help="time one decision's CEL work on hostile selectors, cold",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("--case", help=argparse.SUPPRESS)
    command.set_defaults(func=run)


def _one(name: str) -> dict[str, Any]:
    warm()
    engine = CelEngine()
    spec = DeviceSpec("gpu", Claim.DRA, "gpu.nvidia.com", None, 8)
    budget = decision_budget()
    evaluator = SelectorEvaluator(engine, budget)
    start = time.perf_counter()
    outcome = "evaluated"
    try:
        for expression in CASES[name]:
            if evaluator.compile_error(expression) is None:
                evaluator.evaluate(expression, spec)
    except DecisionStopped as stop:
        outcome = "stopped: " + ("parsing" if stop.device is None else "evaluating")
    elapsed = time.perf_counter() - start
    return {"case": name, "ms": round(elapsed * 1000, 1), "spent": budget.spent, "outcome": outcome}


def run(args: argparse.Namespace) -> int:
    if args.case:
        print(json.dumps(_one(args.case)))
        return 0
    worst = 0.0
    for name in CASES:
        out = subprocess.run(
            [sys.executable, "-m", "modelplane_cli.main", "bench", "hostile", "--case", name],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result = json.loads(out.strip().splitlines()[-1])
        worst = max(worst, result["ms"])
        print(json.dumps(result))
    print(json.dumps({"case": "worst", "ms": worst}))
    return 0
