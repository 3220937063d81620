"""`modelplane`: render a fleet, evaluate CEL, complete a shell.

Each command lives in its own module exposing `register(subparsers)`; this file
only wires them together, so adding a command never touches the others.

Commands for developers (`modelplane bench`) live in the dev-only workspace member
`modelplane-dev`, which registers them in the `modelplane.commands` entry-point
group. The wheel a fleet repository installs carries none of that tooling; where
`modelplane-dev` is not installed, `modelplane bench` is simply not a command.
"""

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version

from modelplane_cli import cel_command, completion_command, render_command

EXIT_USAGE = 2
# Where other installed distributions (modelplane-dev) register extra commands:
# each entry point names a `register(subparsers)` function.
COMMANDS_GROUP = "modelplane.commands"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelplane",
        description="Preview and test Modelplane, a control plane serving models on GPU fleets.",
    )
    parser.add_argument("--version", action="version", version=f"modelplane {cli_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    render_command.register(subparsers)
    cel_command.register(subparsers)
    completion_command.register(subparsers)
    # Sorted by name so the help and completions do not depend on install order.
    for extra in sorted(entry_points(group=COMMANDS_GROUP), key=lambda point: point.name):
        extra.load()(subparsers)
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
