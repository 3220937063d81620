"""`modelplane bench faults`: `render --faults` over many seeds of every example fleet.

Each example set (the directories `make run` renders) is rendered once per seed
with `--faults SEED` and functions called in-process, reading the examples once.
A seed passes when the render converges after the faults stop and no round broke
an invariant (`modelplane_cli.render.invariants`); any other error a faulted
render ends with (a failed reconcile in the last round) fails it too. Prints one
line per example set, and every failing seed's errors; exits 1 if any seed failed.
"""

import argparse
import time
from pathlib import Path
from typing import Final

from crossplane.function import logging as function_logging

from modelplane_cli.render import (
    Apis,
    FunctionRegistry,
    SchemaAdmission,
    default_apis_dir,
    read_documents,
    render,
)
from modelplane_cli.render.faults import Faults

EXIT_OK = 0
EXIT_FAILED = 1
DEFAULT_SEEDS = 200
# The example sets, as `make run` and the examples test render them.
EXAMPLE_SETS: Final[dict[str, tuple[str, ...]]] = {
    "fleet": ("catalog", "fleet"),
    "serving": ("catalog", "serving"),
    **{
        provider: ("catalog", "schedulers/models.yaml", f"schedulers/{provider}")
        for provider in ("kai", "kueue", "volcano", "coscheduling", "default")
    },
    "stack": ("catalog", "schedulers/models.yaml", "stack"),
    "caching": ("catalog", "caching"),
    "eks": ("clusters/eks",),
    "gke": ("clusters/gke",),
}


def register_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    command = commands.add_parser(
        "faults",
        help="render every example fleet with --faults over many seeds; fail on a broken invariant",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument(
        "--seeds", type=int, default=DEFAULT_SEEDS, help=f"seeds 0..N-1 (default {DEFAULT_SEEDS})"
    )
    command.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    command.add_argument(
        "--examples", type=Path, default=Path("examples"), help="the examples directory"
    )
    command.add_argument(
        "--set",
        action="append",
        choices=sorted(EXAMPLE_SETS),
        dest="sets",
        help="only this example set (repeatable; default: all)",
    )
    command.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    function_logging.configure(function_logging.Level.DISABLED)
    apis = Apis.load(default_apis_dir())
    registry = FunctionRegistry()
    admission = SchemaAdmission.from_files(apis.definition_files)
    seeds = range(args.first, args.first + args.seeds)
    failed = 0
    for name in args.sets or sorted(EXAMPLE_SETS):
        documents = read_documents([str(args.examples / p) for p in EXAMPLE_SETS[name]])
        started = time.perf_counter()
        injected = 0
        rounds = 0
        bad: list[tuple[int, list[str]]] = []
        for seed in seeds:
            result = render(
                documents, apis, registry, admission, in_process=True, faults=Faults(seed)
            )
            injected += len(result.faults)
            rounds = max(rounds, result.rounds)
            if result.errors:
                bad.append((seed, result.errors))
        took = time.perf_counter() - started
        print(
            f"{name}: {len(seeds) - len(bad)}/{len(seeds)} seeds keep every invariant and "
            f"converge; {injected} faults injected; at most {rounds} rounds; {took:.0f} s",
            flush=True,
        )
        for seed, errors in bad:
            for line in errors:
                print(f"  seed {seed}: {line}", flush=True)
        failed += len(bad)
    return EXIT_FAILED if failed else EXIT_OK
