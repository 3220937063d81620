"""`modelplane`: render a fleet, evaluate CEL, complete a shell.

Each command lives in its own module exposing `register(subparsers)`; this file
only wires them together, so adding a command never touches the others.

Commands for developers (`modelplane bench`) live in the dev-only workspace member
`modelplane-dev`, which registers them in the `modelplane.commands` entry-point
group. The wheel a fleet repository installs carries none of that tooling; where
`modelplane-dev` is not installed, `modelplane bench` is simply not a command.

Start-up imports only what the chosen command needs: `modelplane cel ...` never
imports the render engine, and `modelplane --help` lists the built-in commands
from `BUILTIN_COMMANDS` without importing any of them (design/start-up.md).
"""

import argparse
import importlib
import io
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Final, NamedTuple, TypeAlias

EXIT_USAGE = 2
# Where other installed distributions (modelplane-dev) register extra commands:
# each entry point names a `register(subparsers)` function.
COMMANDS_GROUP = "modelplane.commands"

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # pyright: ignore[reportPrivateUsage]
Register: TypeAlias = Callable[[Subparsers], None]


class Builtin(NamedTuple):
    """A command this package ships: the module whose `register` builds its parser,
    and the one line `modelplane --help` lists it with (the same words its
    `register` gives `add_parser`; tests/test_start_up.py holds them equal)."""

    module: str
    help: str


BUILTIN_COMMANDS: Final = {
    "render": Builtin(
        "modelplane_cli.render_command",
        "render composites through their functions until the world converges",
    ),
    "cel": Builtin(
        "modelplane_cli.cel_command",
        "evaluate CEL with the Kubernetes libraries Modelplane supports",
    ),
    "completion": Builtin(
        "modelplane_cli.completion_command",
        "print a shell completion script (bash, zsh or fish)",
    ),
}


def _top_parser() -> tuple[argparse.ArgumentParser, Subparsers]:
    parser = argparse.ArgumentParser(
        prog="modelplane",
        description="Preview and test Modelplane, a control plane serving models on GPU fleets.",
    )
    parser.add_argument("--version", action="version", version=f"modelplane {cli_version()}")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def _builtin_register(name: str) -> Register:
    register: Register = importlib.import_module(BUILTIN_COMMANDS[name].module).register
    return register


def _extra_commands() -> list[tuple[str, Callable[[], Register]]]:
    # Sorted by name so the help and completions do not depend on install order.
    points = sorted(entry_points(group=COMMANDS_GROUP), key=lambda point: point.name)
    return [(point.name, point.load) for point in points]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only`, that command alone, so that only its
    module is imported (the parser `main` runs a chosen command with)."""
    parser, subparsers = _top_parser()
    for name in BUILTIN_COMMANDS:
        if only is None or name == only:
            _builtin_register(name)(subparsers)
    for name, load in _extra_commands():
        if only is None or name == only:
            load()(subparsers)
    return parser


def listing_parser() -> argparse.ArgumentParser:
    """The command line as `modelplane --help` shows it: every command's name and
    help line, the built-in ones without importing their modules. Another
    distribution's commands are loaded: their help lines live only in them."""
    parser, subparsers = _top_parser()
    for name, builtin in BUILTIN_COMMANDS.items():
        subparsers.add_parser(name, help=builtin.help)
    for _name, load in _extra_commands():
        load()(subparsers)
    return parser


def cli_version() -> str:
    """The installed modelplane-cli's version."""
    try:
        return version("modelplane-cli")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown"


def _parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """A command word comes first (the top level's options, -h and --version, take no
    value): that command's parser alone. Otherwise (--help, --version, nothing, an
    unknown option) the listing, which answers each as the whole parser would. A
    word that is no command gets argparse's own error from the listing too."""
    if argv and not argv[0].startswith("-"):
        word = argv[0]
        if word in BUILTIN_COMMANDS or any(name == word for name, _ in _extra_commands()):
            return build_parser(only=word)
    return listing_parser()


def _utf8_stdio() -> None:
    """Read and write the standard streams as UTF-8, as every file is read: what a
    render prints must be the same bytes under any locale (a Latin-1 or ASCII locale
    would re-encode, or fail on, a non-ASCII annotation)."""
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.encoding.lower() != "utf-8":
            stream.reconfigure(encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    _utf8_stdio()
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = _parser_for(arguments)
    args = parser.parse_args(arguments)
    handler = getattr(args, "func", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return int(handler(args))


if __name__ == "__main__":
    sys.exit(main())
