"""`modelplane`: render a fleet, evaluate CEL, benchmark the scheduler.

Each command lives in its own module exposing `register(subparsers)`; this file
only wires them together, so adding a command never touches the others.
"""

import argparse
import sys
from collections.abc import Sequence

from modelplane_cli import bench_command, cel_command, render_command

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelplane",
        description="Preview and test Modelplane, a control plane serving models on GPU fleets.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    render_command.register(subparsers)
    cel_command.register(subparsers)
    bench_command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "func", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return int(handler(args))


if __name__ == "__main__":
    sys.exit(main())
