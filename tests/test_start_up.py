"""`modelplane` imports only what the chosen command needs (design/start-up.md)."""

import json
import subprocess
import sys

from modelplane_cli.main import BUILTIN_COMMANDS, build_parser, listing_parser

# Run in a fresh interpreter: the test process has imported everything already.
# Another distribution's commands (modelplane-dev's `bench`) are left out, as in the
# wheel a fleet repository installs; `cel` is chosen with them in place.
_PROBE = """
import contextlib, io, json, sys
from modelplane_cli import main
seen = {}
def heavy():
    return sorted(m for m in HEAVY if m in sys.modules)
with contextlib.redirect_stdout(io.StringIO()):
    real = main._extra_commands
    main._extra_commands = lambda: []
    try:
        main.main(["--help"])
    except SystemExit:
        pass
    seen["--help"] = heavy()
    main._extra_commands = real
    main.main(["cel", "eval", "1 + 2"])
    seen["cel"] = heavy()
json.dump(seen, sys.__stdout__)
"""
HEAVY = [
    "modelplane_cli.render",
    "modelplane_cli.render.engine",
    "modelplane_cli.render_command",
    "modelplane_cli.schema",
    "compose_model_deployment",
    "modelplane_dev",
]


def test_help_and_cel_do_not_import_the_render_engine() -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{_PROBE}"],
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(done.stdout)
    assert seen == {"--help": [], "cel": []}


def test_the_help_listing_is_the_whole_parsers() -> None:
    # The listing names each built-in command with BUILTIN_COMMANDS' line, not by
    # importing it: the whole parser, every module imported, must show the same.
    assert listing_parser().format_help() == build_parser().format_help()
    for name in BUILTIN_COMMANDS:
        assert f"    {name}" in listing_parser().format_help()


def test_a_chosen_command_is_the_only_one_built() -> None:
    for name in BUILTIN_COMMANDS:
        only = build_parser(only=name)
        assert only.parse_args([name, *(["bash"] if name == "completion" else [])]).command == name
        assert {name} == set(_commands(only))


def _commands(parser: object) -> list[str]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    found: list[str] = []
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            found.extend(action.choices)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    return found
