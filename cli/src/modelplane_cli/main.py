"""`modelplane`: render a fleet, evaluate CEL, benchmark the scheduler, complete a shell.

Each command lives in its own module exposing `register(subparsers)`; this file
only wires them together, so adding a command never touches the others.
"""

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from modelplane_cli import bench_command, cel_command, completion_command, render_command

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelplane",
        description="Preview and test Modelplane, a control plane serving models on GPU fleets.",
    )
    parser.add_argument("--version", action="version", version=f"modelplane {cli_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    render_command.register(subparsers)
    cel_command.register(subparsers)
    bench_command.register(subparsers)
    completion_command.register(subparsers)
    return parser


def cli_version() -> str:
    """The installed modelplane-cli's version."""
    try:
        return version("modelplane-cli")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown"


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
